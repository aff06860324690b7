import t from 'tap'
import { validate } from '@gate/schemas'
import { agreeWithPeer, GATE_FEATURES, localCapabilities, negotiateFeatures, parseCapabilities } from '../index.js'

t.test("Gate's envelope carries the three initial features and validates", async t => {
  const local = localCapabilities()
  t.same(Object.keys(local.features).sort(), ['accepts_anchor_batch_v1', 'accepts_hybrid_signatures', 'delegation_chain_binding'])
  t.same(validate('gate.capabilities.v1', local), { ok: true })
  t.equal(GATE_FEATURES.accepts_hybrid_signatures, true)
})

t.test('peers use the intersection of what both advertise as true; unknown names are left out', async t => {
  const remote = parseCapabilities({ schema: 'gate.capabilities.v1', features: { accepts_hybrid_signatures: true, delegation_chain_binding: false, accepts_anchor_batch_v1: true, accepts_bbs_v9: true } })
  t.same([...negotiateFeatures(localCapabilities(), remote)], ['accepts_hybrid_signatures'])
  t.same([...agreeWithPeer(remote, 'peer', ['accepts_hybrid_signatures'])], ['accepts_hybrid_signatures'])
  t.throws(() => agreeWithPeer(remote, 'trust-control', ['delegation_chain_binding']), { code: 'gate_incompatible_peer', message: /trust-control: does not advertise delegation_chain_binding/ })
})

t.test('fail closed: another schema id, a malformed name, a non-boolean, another member', async t => {
  const cases: [unknown, RegExp][] = [
    [{ schema: 'gate.capabilities.v2', features: {} }, /unsupported capabilities schema "gate.capabilities.v2"/],
    [{ features: {} }, /unsupported capabilities schema undefined/],
    [{ schema: 'gate.capabilities.v1', features: { 'accepts-hybrid': true } }, /malformed feature name "accepts-hybrid"/],
    [{ schema: 'gate.capabilities.v1', features: { Accepts: true } }, /malformed feature name/],
    [{ schema: 'gate.capabilities.v1', features: { '': true } }, /malformed feature name/],
    [{ schema: 'gate.capabilities.v1', features: { accepts_hybrid_signatures: 'yes' } }, /must be true or false/],
    [{ schema: 'gate.capabilities.v1', features: [] }, /features must be an object/],
    [{ schema: 'gate.capabilities.v1', features: {}, extra: 1 }, /unknown member "extra"/],
    ['gate.capabilities.v1', /not a JSON object/],
  ]
  for (const [value, message] of cases) {
    t.throws(() => parseCapabilities(value, 'the sidecar'), { code: 'gate_incompatible_peer', message }, String(message))
    t.equal(validate('gate.capabilities.v1', value).ok, false, `the schema refuses it too: ${String(message)}`)
  }
})
