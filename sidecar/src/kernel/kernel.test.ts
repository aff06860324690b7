import t from 'tap'
import { verifyHttpReceipt, sha256Hex, type CapabilityToken, type HttpMethod } from '@gate/sdk'
import { exampleSigner } from '@gate/sdk/testing'
import { validate } from '@gate/schemas'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'
import { KERNEL_AUTHORITY as signer, KERNEL_NOW as NOW, kernelRequest as request, kernelToken, setupKernel as setup } from '../testing/kernel-setup.js'
import { encodeCapabilityToken } from './capability-token.js'

function token(grants: CapabilityToken['scope']['grants'], extra: Partial<CapabilityToken> = {}, issuer = signer): CapabilityToken {
  return kernelToken(grants ?? [], extra, issuer)
}

t.test('verdict matrix of spec 01 and 02 (no token needed for safe routes)', async t => {
  const { kernel } = setup()
  const valid = encodeCapabilityToken(token([{ server_id: 'http', tool_name: '*' }]))
  const cases: [string, HttpMethod, string, string | undefined, string, string][] = [
    ['GET is a session allow', 'GET', '/pets', undefined, 'allow', 'DefaultPolicyGuard'],
    ['HEAD is safe', 'HEAD', '/pets/7', undefined, 'allow', 'DefaultPolicyGuard'],
    ['OPTIONS is safe', 'OPTIONS', '/pets', undefined, 'allow', 'DefaultPolicyGuard'],
    ['POST without token is denied by CapabilityGuard', 'POST', '/pets', undefined, 'deny', 'CapabilityGuard'],
    ['PUT without token', 'PUT', '/pets/1', undefined, 'deny', 'CapabilityGuard'],
    ['PATCH without token', 'PATCH', '/pets/1', undefined, 'deny', 'CapabilityGuard'],
    ['DELETE without token', 'DELETE', '/pets/1', undefined, 'deny', 'CapabilityGuard'],
    ['x-gate-side-effects false allows a POST', 'POST', '/pets/search', undefined, 'allow', 'DefaultPolicyGuard'],
    ['x-gate-side-effects true denies a GET', 'GET', '/admin/export', undefined, 'deny', 'CapabilityGuard'],
    ['unmatched GET falls back to the method rule', 'GET', '/nowhere', undefined, 'allow', 'DefaultPolicyGuard'],
    ['unmatched POST falls back to the method rule', 'POST', '/nowhere', undefined, 'deny', 'CapabilityGuard'],
    ['POST with a valid token', 'POST', '/pets', valid, 'allow', 'CapabilityGuard'],
    ['GET on side-effects route with a valid token', 'GET', '/admin/export', valid, 'allow', 'CapabilityGuard'],
  ]
  for (const [name, method, path, header, verdict, guard] of cases) {
    const e = await kernel.evaluate({ request: request(method, path), capabilityHeader: header })
    t.equal(e.verdict.verdict, verdict, name)
    t.equal(e.evidence[0]?.guard_name, guard, `${name}: evidence`)
    t.equal(e.status, verdict === 'allow' ? 200 : 403, `${name}: status`)
    t.ok(verifyHttpReceipt(e.receipt, { trustedKeys: [signer.publicKey] }).ok, `${name}: receipt verifies`)
    t.ok(validate('gate.http.evaluate_response.v1', JSON.parse(e.responseJson)).ok, `${name}: response validates`)
  }
})

t.test('the receipt records the matched pattern, or the raw path when unmatched', async t => {
  const { kernel } = setup()
  t.equal((await kernel.evaluate({ request: request('GET', '/pets/42') })).receipt.route_pattern, '/pets/{id}')
  t.equal((await kernel.evaluate({ request: request('GET', '/nowhere/1') })).receipt.route_pattern, '/nowhere/1')
  const deny = await kernel.evaluate({ request: request('POST', '/pets') })
  t.match(deny.verdict, { verdict: 'deny', guard: 'CapabilityGuard', http_status: 403, details: { reason_code: 'capability_required', required_scope: 'http:POST /pets' } })
  t.equal(deny.receipt.policy_hash, sha256Hex(PETS_SPEC_YAML))
  t.same(deny.receipt.metadata, { gate_http_status_scope: 'decision' })
})

t.test('invalid tokens are denied by CapabilityGuard with the validation failure as reason', async t => {
  const { kernel } = setup()
  const stranger = exampleSigner('ed25519', 99)
  const cases: [string, string, string][] = [
    ['expired', encodeCapabilityToken(token([{ server_id: 'http', tool_name: '*' }], { issued_at: NOW - 100, expires_at: NOW - 1 })), 'capability_expired'],
    ['not yet valid', encodeCapabilityToken(token([{ server_id: 'http', tool_name: '*' }], { issued_at: NOW + 10 })), 'capability_not_yet_valid'],
    ['untrusted issuer', encodeCapabilityToken(token([{ server_id: 'http', tool_name: '*' }], {}, stranger)), 'capability_untrusted_issuer'],
    ['wrong scope', encodeCapabilityToken(token([{ server_id: 'http', tool_name: 'DELETE /pets/{id}' }])), 'scope_mismatch'],
    ['other server', encodeCapabilityToken(token([{ server_id: 'mcp', tool_name: '*' }])), 'scope_mismatch'],
    ['garbage', 'not-a-token!', 'capability_invalid'],
    ['tampered', encodeCapabilityToken({ ...token([{ server_id: 'http', tool_name: 'GET /x' }]), scope: { grants: [{ server_id: 'http', tool_name: '*' }] } }), 'capability_invalid_signature'],
  ]
  for (const [name, header, code] of cases) {
    const e = await kernel.evaluate({ request: request('POST', '/pets'), capabilityHeader: header })
    t.match(e.verdict, { verdict: 'deny', guard: 'CapabilityGuard', details: { reason_code: code } }, name)
  }
})

t.test('grant convention: exact, operationId, method wildcard, prefix wildcard', async t => {
  const { kernel } = setup()
  const covered: [string, HttpMethod, string][] = [
    ['POST /pets', 'POST', '/pets'],
    ['createPet', 'POST', '/pets'],
    ['DELETE *', 'DELETE', '/pets/3'],
    ['* /pets/{id}', 'PATCH', '/pets/3'],
    ['POST /pets/*', 'POST', '/pets/3/adopt'],
  ]
  for (const [toolName, method, path] of covered) {
    const header = encodeCapabilityToken(token([{ server_id: 'http', tool_name: toolName }]))
    const e = await kernel.evaluate({ request: request(method, path), capabilityHeader: header })
    t.not(e.evidence.find(x => x.guard_name === 'CapabilityGuard')?.verdict, false, `${toolName} covers ${method} ${path}`)
  }
  const header = encodeCapabilityToken(token([{ server_id: 'http', tool_name: 'POST /pets/*' }]))
  t.equal((await kernel.evaluate({ request: request('POST', '/petsx'), capabilityHeader: header })).verdict.verdict, 'deny', 'prefix is segment-wise')
  const constrained = encodeCapabilityToken(token([{ server_id: 'http', tool_name: '*', constraints: [{ type: 'governed_intent_required' }] }]))
  t.equal((await kernel.evaluate({ request: request('POST', '/pets'), capabilityHeader: constrained })).verdict.verdict, 'deny', 'constrained grants fail closed')
})

t.test('capability_id naming an issued token works for an authenticated caller; a mismatching id is denied', async t => {
  const { kernel, ports } = setup()
  const tk = token([{ server_id: 'http', tool_name: 'POST /pets' }])
  ports.issued.set(tk.id, tk)
  const byId = await kernel.evaluate({ request: request('POST', '/pets', { capability_id: tk.id }), authenticated: true })
  t.equal(byId.verdict.verdict, 'allow')
  t.equal(byId.receipt.capability_id, tk.id)
  const unknown = await kernel.evaluate({ request: request('POST', '/pets', { capability_id: 'cap-unknown' }), authenticated: true })
  t.match(unknown.verdict, { verdict: 'deny', details: { reason_code: 'capability_invalid' } })
  const stranger = await kernel.evaluate({ request: request('POST', '/pets', { capability_id: tk.id }) })
  t.match(stranger.verdict, { verdict: 'deny', details: { reason_code: 'capability_required' } }, 'from anyone else it is no token')
  t.equal(stranger.receipt.capability_id, null)
  t.same(stranger.receipt.metadata, { gate_http_status_scope: 'decision', gate_presented_capability: { capability_id: tk.id, subject: null, verified: false } })
  const other = token([{ server_id: 'http', tool_name: '*' }])
  const mismatch = await kernel.evaluate({ request: request('POST', '/pets', { capability_id: tk.id }), capabilityHeader: encodeCapabilityToken(other) })
  t.match(mismatch.verdict, { verdict: 'deny', details: { reason_code: 'capability_id_mismatch' } })
})

t.test('the gate_capability query parameter works and never enters the content hash', async t => {
  const { kernel } = setup()
  const tk = token([{ server_id: 'http', tool_name: 'POST /pets' }])
  const a = await kernel.evaluate({ request: request('POST', '/pets', { query: { gate_capability: encodeCapabilityToken(tk), a: '1' } }) })
  t.equal(a.verdict.verdict, 'allow')
  const b = await kernel.evaluate({ request: request('POST', '/pets', { query: { a: '1' } }), capabilityHeader: encodeCapabilityToken(tk) })
  t.equal(a.receipt.content_hash, b.receipt.content_hash)
})

t.test('a revoked capability is denied before evaluation, on any route', async t => {
  const { kernel, ports } = setup()
  const tk = token([{ server_id: 'http', tool_name: '*' }])
  ports.revoked.add(tk.id)
  for (const [m, p] of [['POST', '/pets'], ['GET', '/pets']] as const) {
    const e = await kernel.evaluate({ request: request(m, p), capabilityHeader: encodeCapabilityToken(tk) })
    t.match(e.verdict, { verdict: 'deny', guard: 'RevocationGuard', details: { reason_code: 'capability_revoked' } })
    t.match((e.verdict as { reason: string }).reason, /revoked/)
    t.equal(e.evidence.length, 1, 'no other guard ran')
  }
})

t.test('max_invocations is enforced and a denied request spends nothing', async t => {
  const { kernel } = setup()
  const header = encodeCapabilityToken(token([{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 2 }]))
  const results = await Promise.all([1, 2, 3, 4].map(() => kernel.evaluate({ request: request('POST', '/pets'), capabilityHeader: header })))
  t.same(results.map(r => r.verdict.verdict).sort(), ['allow', 'allow', 'deny', 'deny'])
  t.match(results.find(r => r.verdict.verdict === 'deny')?.verdict, { guard: 'BudgetGuard', details: { reason_code: 'budget_exhausted' } })
})

t.test('approval: pending 409 → approved → allowed once → second use denied', async t => {
  const { kernel, ports } = setup()
  const header = encodeCapabilityToken(token([{ server_id: 'http', tool_name: '*' }]))
  const first = await kernel.evaluate({ request: request('POST', '/pets/1/adopt'), capabilityHeader: header })
  t.match(first.verdict, { verdict: 'deny', guard: 'ApprovalGuard', http_status: 409 })
  t.equal(first.status, 409)
  t.ok(first.approval)
  const id = first.approval!.approval_id
  t.equal(first.approval!.resume_path, `/approvals/${id}/respond`)
  t.equal(ports.approvalRecords.get(id)?.decisionReceiptId, first.receipt.id)
  // not yet approved
  t.match((await kernel.evaluate({ request: request('POST', '/pets/1/adopt'), capabilityHeader: header, approvalId: id })).verdict, { verdict: 'deny', details: { reason_code: 'approval_invalid' } })
  ports.approvalRecords.get(id)!.state = 'approved'
  // other content is not covered
  t.equal((await kernel.evaluate({ request: request('POST', '/pets/2/adopt'), capabilityHeader: header, approvalId: id })).verdict.verdict, 'deny')
  const ok = await kernel.evaluate({ request: request('POST', '/pets/1/adopt'), capabilityHeader: header, approvalId: id })
  t.equal(ok.verdict.verdict, 'allow')
  t.ok(ok.evidence.some(e => e.guard_name === 'ApprovalGuard' && e.verdict))
  t.equal((await kernel.evaluate({ request: request('POST', '/pets/1/adopt'), capabilityHeader: header, approvalId: id })).verdict.verdict, 'deny', 'second use')
})

t.test('strict nonces: incomplete + nonce, retry reuses the request id, single use, bound to content', async t => {
  const { kernel } = setup({ strictNonces: true })
  const header = encodeCapabilityToken(token([{ server_id: 'http', tool_name: '*' }]))
  const pre = await kernel.evaluate({ request: request('POST', '/pets', { body_hash: 'a'.repeat(64) }), capabilityHeader: header })
  t.match(pre.verdict, { verdict: 'incomplete' })
  t.equal(pre.status, 428)
  t.ok(pre.executionNonce)
  t.ok(validate('gate.execution_nonce.v1', pre.executionNonce).ok)
  t.ok(validate('gate.http.evaluate_response.v1', JSON.parse(pre.responseJson)).ok)
  const nonceId = pre.executionNonce!.nonce_id
  const changed = await kernel.evaluate({ request: request('POST', '/pets', { body_hash: 'b'.repeat(64) }), capabilityHeader: header, nonceId })
  t.match(changed.verdict, { verdict: 'deny', details: { reason_code: 'nonce_mismatch' } })
  const retry = await kernel.evaluate({ request: request('POST', '/pets', { body_hash: 'a'.repeat(64) }), capabilityHeader: header, nonceId })
  t.equal(retry.verdict.verdict, 'allow')
  t.equal(retry.receipt.request_id, pre.receipt.request_id, 'bound request id reused')
  const again = await kernel.evaluate({ request: request('POST', '/pets', { body_hash: 'a'.repeat(64) }), capabilityHeader: header, nonceId })
  t.match(again.verdict, { verdict: 'deny', details: { reason_code: 'nonce_used' } })
  // the signed nonce object works too
  const pre2 = await kernel.evaluate({ request: request('POST', '/pets'), capabilityHeader: header })
  const retry2 = await kernel.evaluate({ request: request('POST', '/pets', { execution_nonce: pre2.executionNonce }), capabilityHeader: header })
  t.equal(retry2.verdict.verdict, 'allow')
  // safe routes are not preflighted
  t.equal((await kernel.evaluate({ request: request('GET', '/pets') })).verdict.verdict, 'allow')
})

t.test('declared cost above x-gate-budget-limit is denied', async t => {
  const { kernel } = setup()
  const header = encodeCapabilityToken(token([{ server_id: 'http', tool_name: '*' }]))
  const over = await kernel.evaluate({ request: request('PATCH', '/pets/1', { governed_intent: { max_amount: { units: 501, currency: 'USD' } } }), capabilityHeader: header })
  t.match(over.verdict, { verdict: 'deny', guard: 'BudgetGuard', details: { reason_code: 'budget_limit_exceeded' } })
  const under = await kernel.evaluate({ request: request('PATCH', '/pets/1', { governed_intent: { max_amount: { units: 500, currency: 'USD' } } }), capabilityHeader: header })
  t.equal(under.verdict.verdict, 'allow')
})

t.test('finalize re-signs with the answered status, final scope and the decision id', async t => {
  const { kernel, ports } = setup()
  const e = await kernel.evaluate({ request: request('GET', '/pets') })
  const f = await kernel.finalize(e, 502)
  t.equal(f.receipt.response_status, 502)
  t.same(f.receipt.metadata, { gate_http_status_scope: 'final', gate_decision_receipt_id: e.receipt.id })
  t.equal(f.receipt.verdict.verdict, 'allow')
  t.not(f.receipt.id, e.receipt.id)
  t.ok(verifyHttpReceipt(f.receipt, { trustedKeys: [signer.publicKey] }).ok)
  t.equal(ports.stored.at(-1)?.kind, 'final')
  t.equal(ports.stored.at(-1)?.decisionReceiptId, e.receipt.id)
})

t.test('a failing receipt store fails the evaluation (no receipt, no answer)', async t => {
  const { kernel, ports } = setup()
  ports.failAppends = true
  await t.rejects(kernel.evaluate({ request: request('GET', '/pets') }))
})

t.test('without a spec every path follows the method rule', async t => {
  const { kernel } = setup({ routeTable: null })
  t.equal((await kernel.evaluate({ request: request('GET', '/anything') })).verdict.verdict, 'allow')
  t.equal((await kernel.evaluate({ request: request('DELETE', '/anything') })).verdict.verdict, 'deny')
})

t.test('supplemental_authorization is denied at the authority boundary, on any route', async t => {
  const { kernel } = setup()
  for (const [m, p] of [['GET', '/pets'], ['POST', '/pets']] as const) {
    const e = await kernel.evaluate({ request: request(m, p, { supplemental_authorization: { kind: 'x' } }) })
    t.match(e.verdict, { verdict: 'deny', guard: 'AuthorityBoundaryGuard', details: { reason_code: 'supplemental_authorization_unsupported' } })
  }
})

t.test('a signer that fails fails the evaluation closed with gate_receipt_sign_failed and stores nothing', async t => {
  const broken = setup({}, { algorithm: signer.algorithm, publicKey: signer.publicKey, sign: () => { throw new Error('the key is gone') } })
  const results = await Promise.allSettled([1, 2].map(() => broken.kernel.evaluate({ request: request('GET', '/pets') })))
  for (const r of results) t.match(r, { status: 'rejected', reason: { code: 'gate_receipt_sign_failed' } })
  t.equal(broken.ports.stored.length, 0, 'nothing was stored')
})
