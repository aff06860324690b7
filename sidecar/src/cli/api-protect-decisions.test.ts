// End to end through the real `gate api protect` (testing/api-protect-fixture.ts): strict nonces (428,
// then the retry with the nonce), a delegated child wider than its link (issue 23), and an upstream that
// is down (502 with a finalized receipt).
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import { createSigner, generateSecret, type HttpReceipt } from '@gate/sdk'
import { widenedDelegation } from '@gate/sdk/testing'
import { checkFinalReceipt, fixture, issueToken, startProtect, startUpstream } from '../testing/api-protect-fixture.js'
import { startUpstreamApp } from '../testing/upstream-app.js'

t.test('strict nonces: 428 with the evaluate response, then the retry with the nonce is forwarded', async t => {
  const upstream = await startUpstream(t)
  const files = fixture(t)
  const gate = await startProtect(t, ['--upstream', upstream.url, '--spec', files.spec, '--receipt-store', files.store, '--strict-nonces'])
  const { header } = await issueToken(gate, ['POST /pets'])
  const send = (extra: Record<string, string> = {}) =>
    request(`${gate.url}/pets`, { method: 'POST', body: '{"name":"n"}', headers: { 'x-gate-capability': header, 'content-type': 'application/json', ...extra } })
  const first = await send()
  t.equal(first.statusCode, 428)
  const body = (await first.body.json()) as { verdict: { verdict: string }; receipt: HttpReceipt; execution_nonce: { nonce_id: string } }
  t.equal(body.verdict.verdict, 'incomplete')
  t.match(body.execution_nonce.nonce_id, /^[0-9a-f]{32}$/)
  const receipt = await checkFinalReceipt(t, gate, first.headers['x-gate-receipt-id'], { status: 428, verdict: 'incomplete' })
  t.equal(receipt?.metadata?.gate_decision_receipt_id, body.receipt.id, 'the body is the evaluate response with the decision receipt')
  t.equal(upstream.received.length, 0)

  const retry = await send({ 'x-gate-execution-nonce': body.execution_nonce.nonce_id })
  t.equal(retry.statusCode, 201)
  await retry.body.dump()
  const final = await checkFinalReceipt(t, gate, retry.headers['x-gate-receipt-id'], { status: 201, verdict: 'allow' })
  t.equal(final?.request_id, body.receipt.request_id, 'the retry reuses the request id bound to the nonce')
})

t.test('issue 23: a delegated child wider than its link gets 403 for DELETE /pets/1, nothing forwarded', async t => {
  const upstream = await startUpstream(t)
  const files = fixture(t)
  const seed = generateSecret('ed25519')
  const seedFile = join(files.spec, '..', 'seed')
  writeFileSync(seedFile, Buffer.from(seed).toString('hex') + '\n', { mode: 0o600 })
  const gate = await startProtect(t, ['--upstream', upstream.url, '--spec', files.spec, '--receipt-store', files.store, '--authority-seed-file', seedFile])
  const authority = createSigner({ secret: seed })
  const child = widenedDelegation({ authority, delegatee: createSigner({ secret: generateSecret() }), subject: 'ab'.repeat(32), now: Math.floor(Date.now() / 1000) })
  const before = upstream.received.length
  const r = await request(`${gate.url}/pets/1`, { method: 'DELETE', headers: { 'x-gate-capability': Buffer.from(JSON.stringify(child)).toString('base64url') } })
  t.equal(r.statusCode, 403)
  const body = (await r.body.json()) as Record<string, string>
  t.equal(body.error, 'gate_access_denied')
  t.match(body.message, /invalid capability: delegation_chain\[0\] does not state what it delegates/)
  const receipt = await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 403, verdict: 'deny' })
  t.match(receipt?.verdict, { guard: 'CapabilityGuard', details: { reason_code: 'capability_attenuation_unproven' } })
  t.equal(upstream.received.length, before, 'nothing forwarded')
})

t.test('an upstream that is down: 502 with X-Gate-Receipt-Id; the receipt keeps allow with status 502', async t => {
  const upstream = await startUpstreamApp()
  const downUrl = upstream.url
  await upstream.close()
  const files = fixture(t)
  const gate = await startProtect(t, ['--upstream', downUrl, '--spec', files.spec, '--receipt-store', files.store])
  const r = await request(`${gate.url}/pets`)
  t.equal(r.statusCode, 502)
  t.match(await r.body.text(), /ECONNREFUSED/)
  await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 502, verdict: 'allow' })
})
