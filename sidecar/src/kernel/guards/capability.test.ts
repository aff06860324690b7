// The capability guard through the kernel: delegation, the schema, and a token used for one request
// (constraints decided from the request's arguments, caveats, operations, DPoP).
import t from 'tap'
import type { GateHttpRequest } from '@gate/sdk'
import { delegatedChild, exampleSigner, widenedDelegation } from '@gate/sdk/testing'
import { KERNEL_AGENT, KERNEL_AUTHORITY, KERNEL_NOW, kernelRequest, kernelToken, setupKernel } from '../../testing/kernel-setup.js'
import { encodeCapabilityToken } from '../capability-token.js'

const agentB = exampleSigner('ed25519', 21)
const subjectC = exampleSigner('ed25519', 22).publicKey
const bodyHash = 'a'.repeat(64)

async function decide(request: GateHttpRequest, token: object) {
  const { kernel } = setupKernel()
  return kernel.evaluate({ request, capabilityHeader: encodeCapabilityToken(token as never) })
}

t.test('issue 23 point 1: a delegated child wider than its link is denied DELETE /pets/1 with a reason code', async t => {
  const child = widenedDelegation({ authority: KERNEL_AUTHORITY, delegatee: agentB, subject: subjectC, now: KERNEL_NOW })
  const e = await decide(kernelRequest('DELETE', '/pets/1'), child)
  t.match(e.verdict, { verdict: 'deny', guard: 'CapabilityGuard', details: { reason_code: 'capability_attenuation_unproven' } })
  // a child its delegatee signed beyond what it was delegated is not authentic: its id (the
  // delegatee's choice) is recorded as presented, unverified, never filed as the capability id
  t.equal(e.receipt.capability_id, null)
  t.same(e.receipt.metadata?.gate_presented_capability, { capability_id: child.id, subject: subjectC, verified: false })
  const stated = delegatedChild({
    signers: [KERNEL_AUTHORITY, agentB],
    delegated: [{ scope: { grants: [{ server_id: 'http', tool_name: 'GET /pets' }] }, expires_at: KERNEL_NOW + 600 }],
    child: { scope: { grants: [{ server_id: '*', tool_name: '*' }] }, expires_at: KERNEL_NOW + 600 },
    subject: subjectC,
    now: KERNEL_NOW,
  })
  t.match((await decide(kernelRequest('DELETE', '/pets/1'), stated)).verdict, { verdict: 'deny', details: { reason_code: 'capability_scope_widened' } })
})

t.test('a delegated child within its link is allowed what it holds, and nothing else', async t => {
  const child = delegatedChild({
    signers: [KERNEL_AUTHORITY, agentB],
    delegated: [{ scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets/*' }] }, expires_at: KERNEL_NOW + 600 }],
    child: { scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets/{id}/adopt' }] }, expires_at: KERNEL_NOW + 300 },
    subject: subjectC,
    now: KERNEL_NOW,
  })
  t.match((await decide(kernelRequest('POST', '/pets/1/adopt'), child)).verdict, { verdict: 'deny', guard: 'ApprovalGuard' }, 'past the capability guard')
  t.match((await decide(kernelRequest('POST', '/pets'), child)).verdict, { verdict: 'deny', details: { reason_code: 'scope_mismatch' } })
})

t.test('a token gate.capability.v1 rejects is denied as malformed, whatever its signature', async t => {
  const tk = kernelToken([{ server_id: 'http', tool_name: '*' }])
  for (const bad of [{ ...tk, rate_limit: 5 }, { ...tk, scope: { grants: [{ server_id: 'http', tool_name: '*', max_bytes: 1 }] } }, { ...tk, issuer: tk.issuer.toUpperCase() }]) {
    t.match((await decide(kernelRequest('POST', '/pets'), bad)).verdict, { verdict: 'deny', details: { reason_code: 'capability_malformed' } })
  }
})

t.test("constraints are decided from the request's arguments: path and query parameters, and the body when given", async t => {
  const tk = (constraints: object[]) => kernelToken([{ server_id: 'http', tool_name: '*', constraints: constraints as never }])
  const custom = tk([{ type: 'custom', value: ['id', '7'] }])
  t.equal((await decide(kernelRequest('PUT', '/pets/7'), custom)).verdict.verdict, 'allow', 'path parameter')
  t.match((await decide(kernelRequest('PUT', '/pets/8'), custom)).verdict, { verdict: 'deny', details: { reason_code: 'constraint_unsatisfied' } })
  const owner = tk([{ type: 'custom', value: ['owner', 'ann'] }])
  t.equal((await decide(kernelRequest('POST', '/pets', { query: { owner: 'ann' } }), owner)).verdict.verdict, 'allow', 'query parameter')
  t.equal((await decide(kernelRequest('POST', '/pets', { query: { owner: 'ann', gate_capability: 'x' } }), owner)).verdict.verdict, 'allow', 'gate_capability is a credential, not an argument')
  // a body Gate was not given: nothing is decided
  t.match((await decide(kernelRequest('POST', '/pets', { query: { owner: 'ann' }, body_hash: bodyHash, body_length: 2 }), owner)).verdict, { verdict: 'deny', details: { reason_code: 'arguments_unavailable' } })
  const withBody = (body: unknown) => kernelRequest('POST', '/pets', { body_hash: bodyHash, body_length: 20, arguments: { body } })
  t.equal((await decide(withBody({ owner: 'ann' }), owner)).verdict.verdict, 'allow', 'the body supplied as arguments.body')
  t.match((await decide(withBody({ owner: 'bob' }), owner)).verdict, { verdict: 'deny', details: { reason_code: 'constraint_unsatisfied' } })
  t.match((await decide(kernelRequest('POST', '/pets', { arguments: { body: { owner: 'ann' } } }), owner)).verdict, { verdict: 'deny', details: { reason_code: 'arguments_unavailable' } }, 'a body for a bodyless request')
  t.match((await decide(kernelRequest('POST', '/pets', { body_hash: bodyHash, arguments: { body: {}, owner: 'ann' } }), owner)).verdict, { verdict: 'deny', details: { reason_code: 'arguments_unavailable' } }, 'arguments other than body')
  t.match((await decide(kernelRequest('PUT', '/pets/7', { query: { id: '7' } }), custom)).verdict, { verdict: 'deny', details: { reason_code: 'arguments_unavailable' } }, 'a path and a query parameter of one name')
  const refused = tk([{ type: 'require_approval_above', value: { threshold_units: 0 } }])
  t.match((await decide(kernelRequest('POST', '/pets'), refused)).verdict, { verdict: 'deny', details: { reason_code: 'constraint_refused' } })
})

t.test('caveats, operations and DPoP constrain the request or refuse it', async t => {
  const all = [{ server_id: 'http', tool_name: '*' }]
  const session = kernelToken(all, { caveats: [{ kind: 'bind_session', predicate: 's-1' }] })
  t.equal((await decide(kernelRequest('POST', '/pets', { session_id: 's-1' }), session)).verdict.verdict, 'allow')
  t.match((await decide(kernelRequest('POST', '/pets', { session_id: 's-2' }), session)).verdict, { verdict: 'deny', details: { reason_code: 'caveat_unsatisfied' } })
  t.match((await decide(kernelRequest('POST', '/pets'), kernelToken(all, { caveats: [{ kind: 'restrict_geo', predicate: 'EU' }] }))).verdict, { verdict: 'deny', details: { reason_code: 'caveat_unsupported' } })
  t.match((await decide(kernelRequest('POST', '/pets'), kernelToken([{ server_id: 'http', tool_name: '*', operations: ['read_result'] }]))).verdict, { verdict: 'deny', details: { reason_code: 'operation_not_granted' } })
  t.match((await decide(kernelRequest('POST', '/pets'), kernelToken([{ server_id: 'http', tool_name: '*', dpop_required: true }]))).verdict, { verdict: 'deny', details: { reason_code: 'dpop_unsupported' } })
  t.equal((await decide(kernelRequest('POST', '/pets'), kernelToken([{ server_id: 'http', tool_name: '*', operations: ['invoke'] }]))).verdict.verdict, 'allow')
})

t.test('a token granting only resources or prompts verifies and allows no request', async t => {
  const resources = kernelToken({ resource_grants: [{ uri_pattern: '*' }] })
  t.match((await decide(kernelRequest('POST', '/pets'), resources)).verdict, { verdict: 'deny', details: { reason_code: 'scope_mismatch' } })
  t.equal(resources.subject, KERNEL_AGENT.publicKey)
})
