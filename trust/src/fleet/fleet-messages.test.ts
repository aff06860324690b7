// The fleet messages' types and schemas agree: typed values validate, the limits the schemas state are
// the protocol's (the deepest delegation chain a verifier accepts), and a reading names what is wrong.
import t from 'tap'
import { getSchema } from '@gate/schemas'
import { MAX_DELEGATION_DEPTH, type CaptureResult } from '@gate/sdk'
import { readFleetMessage, type AuthorityMessage, type CaptureRequest, type EnrollRequest, type IngestResponse, type RevocationPage } from './fleet-messages.js'

const KEY = 'ab'.repeat(32)

t.test('typed messages are what their schemas accept', async t => {
  const capture: CaptureRequest = { invocations: [{ owner: 'cap_1', key: '0:POST /pets', max: 3, fixedMax: false, kind: 'grant', link: 0 }] }
  const result: CaptureResult = { allowed: false, failed: { kind: 'max_mismatch', index: 0, recordedMax: 2 } }
  const enroll: EnrollRequest = { publicKey: KEY, label: 'sidecar-eu-1' }
  const ingested: IngestResponse = { received: 1, stored: 1, duplicates: 0, results: [{ receiptId: 'cd'.repeat(32), seq: 1, stored: true }] }
  const page: RevocationPage = { revocations: [{ seq: 1, capabilityId: 'cap_1', revokedAt: 1 }], nextCursor: 1, latestSeq: 1, authorityGeneration: 1, authorityPublicKey: KEY }
  const authority: AuthorityMessage = { publicKey: KEY, generation: 1, rotatedAt: 1, trustedPublicKeys: [KEY], trustedKeyCount: 1 }
  t.same(readFleetMessage('gate.fleet.capture_request.v1', capture), { ok: true, value: capture })
  t.same(readFleetMessage('gate.fleet.capture_result.v1', result), { ok: true, value: result })
  t.same(readFleetMessage('gate.fleet.enroll_request.v1', enroll), { ok: true, value: enroll })
  t.same(readFleetMessage('gate.fleet.ingest_response.v1', ingested), { ok: true, value: ingested })
  t.same(readFleetMessage('gate.fleet.revocation_page.v1', page), { ok: true, value: page })
  t.same(readFleetMessage('gate.fleet.authority.v1', authority), { ok: true, value: authority })
})

t.test('a message that is not one is named with its first problem, without the if/then noise', async t => {
  const read = readFleetMessage('gate.fleet.ingest_request.v1', { receipts: [{ coreReceipt: {}, tenant: 'acme' }] })
  t.same(read, { ok: false, problem: "not a gate.fleet.ingest_request.v1: /receipts/0: must have required property 'requestId'" })
})

t.test('the capture schema bounds a plan by the deepest delegation chain a verifier accepts', async t => {
  const schema = getSchema('gate.fleet.capture_request.v1') as {
    properties: { invocations: { maxItems: number; items: { properties: { link: { maximum: number } } } }; costs: { maxItems: number; items: { properties: { link: { maximum: number } } } } }
  }
  const { invocations, costs } = schema.properties
  // the token's own counters (grant, aggregate or family, share) and three per link fit; the grant's cost and one per link
  t.ok(invocations.maxItems >= 3 + 3 * MAX_DELEGATION_DEPTH, `${invocations.maxItems} counters`)
  t.equal(costs.maxItems, 1 + MAX_DELEGATION_DEPTH)
  t.equal(invocations.items.properties.link.maximum, MAX_DELEGATION_DEPTH - 1)
  t.equal(costs.items.properties.link.maximum, MAX_DELEGATION_DEPTH - 1)
})
