// What a request can claim about a capability, against the real processes.
// Item 3 of issue 24: a request naming only `capability_id` (ids are printed in 403 bodies) was evaluated
// as if its holder had presented the token: a stranger used up the holder's max_invocations on the
// proxy's public /gate/evaluate. Now only a caller with the control token gets that lookup; anyone
// else counts as presenting no token, and a wrong bearer is a 401.
// Item 7: a token with a one-byte signature produced deny receipts filed under the victim's capability
// id and agent subject; now receipts carry only authentic ids, the claim sits in
// metadata.gate_presented_capability with verified: false, and the receipt queries never list it.
import t from 'tap'
import { ANONYMOUS_CALLER, createSigner, generateSecret, uuidv7, verifyHttpReceipt, type HttpReceipt } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { startUpstreamApp } from '../testing/upstream-app.js'
import { call } from '../testing/http-client.js'

const TOKEN = 'presentation-control-token-0123456789'
const control = { authorization: `Bearer ${TOKEN}` }
const holderKey = createSigner({ secret: generateSecret() }).publicKey

function request(method: string, path: string, extra: Record<string, unknown> = {}) {
  return { request_id: uuidv7(), method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000), body_hash: null, ...extra }
}

interface Answer {
  verdict: { verdict: string; guard?: string; reason?: string }
  receipt: HttpReceipt
}

t.test('on gate api protect, capability_id from a stranger is no token: the holder keeps every invocation', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const issued = await call(`${gate.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: holderKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 2 }] }, ttlSeconds: 3600 },
    headers: control,
  })
  const capability = (issued.body as { capability: { id: string } }).capability
  const header = Buffer.from(JSON.stringify(capability)).toString('base64url')

  const strangerReceipts: string[] = []
  for (let i = 0; i < 3; i++) {
    const r = await call(`${gate.url}/gate/evaluate`, { body: request('POST', '/pets', { capability_id: capability.id }) })
    t.equal(r.status, 200)
    const answer = r.body as Answer
    t.match(answer.verdict, { verdict: 'deny', guard: 'CapabilityGuard', reason: /^capability required/ }, `stranger attempt ${i + 1}: denied as presenting no token`)
    t.equal(answer.receipt.capability_id, null, 'the receipt is not filed under the holder\'s id')
    t.same(answer.receipt.metadata?.gate_presented_capability, { capability_id: capability.id, subject: null, verified: false })
    strangerReceipts.push(answer.receipt.id)
  }
  const wrong = await call(`${gate.url}/gate/evaluate`, { body: request('POST', '/pets', { capability_id: capability.id }), headers: { authorization: 'Bearer not-the-control-token-000' } })
  t.equal(wrong.status, 401, 'a wrong bearer is refused')
  t.match(wrong.body, { error: 'gate_unauthorized' })

  for (let use = 1; use <= 2; use++) {
    const r = await call(`${gate.url}/pets`, { body: { name: `Rex ${use}` }, headers: { 'x-gate-capability': header } })
    t.equal(r.status, 201, `the holder's use ${use} of 2 still goes through`)
  }
  t.equal((await call(`${gate.url}/pets`, { body: { name: 'Rex 3' }, headers: { 'x-gate-capability': header } })).status, 403, 'the third is the budget\'s')

  const listed = await call(`${gate.url}/v1/receipts/query?capabilityId=${capability.id}&limit=200`, { headers: control })
  t.equal(listed.status, 200)
  const ids = JSON.stringify(listed.body)
  for (const id of strangerReceipts) t.notMatch(ids, id, `stranger receipt ${id.slice(0, 8)} is not listed under the capability`)

  // the control token holder (the SDK with sidecarToken) may name the token by id
  const authenticated = await call(`${gate.url}/gate/evaluate`, { body: request('POST', '/pets/search', { capability_id: capability.id }), headers: control })
  t.match((authenticated.body as Answer).receipt, { capability_id: capability.id }, 'an authenticated lookup is honoured and recorded')
})

t.test('a forged token naming a victim leaves no receipt under the victim\'s id or subject', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const kernelKey = ((await call(`${gate.url}/gate/live`)).body as { kernel_key: string }).kernel_key
  const issued = await call(`${gate.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: holderKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 3600 },
    headers: control,
  })
  const victim = (issued.body as { capability: Record<string, unknown> & { id: string; subject: string } }).capability
  const forged = { ...victim, signature: 'ab' }
  const forgedHeader = Buffer.from(JSON.stringify(forged)).toString('base64url')
  const receipts: string[] = []
  for (const [method, path] of [['POST', '/pets'], ['GET', '/pets']]) {
    const r = await call(`${gate.url}/gate/evaluate`, { body: request(method, path), headers: { 'x-gate-capability': forgedHeader } })
    const answer = r.body as Answer
    t.equal(answer.receipt.capability_id, null, `${method} ${path}: capability_id null`)
    t.same(answer.receipt.metadata?.gate_presented_capability, { capability_id: victim.id, subject: victim.subject, verified: false }, 'the claim, marked unverified')
    t.equal(verifyHttpReceipt(answer.receipt, { trustedKeys: [kernelKey] }).ok, true, 'and the receipt still verifies')
    receipts.push(answer.receipt.id)
  }
  t.equal(((await call(`${gate.url}/gate/evaluate`, { body: request('POST', '/pets'), headers: { 'x-gate-capability': forgedHeader } })).body as Answer).verdict.verdict, 'deny')
  for (const path of [`/v1/receipts/query?capabilityId=${victim.id}&limit=200`, `/v1/agents/${victim.subject}/receipts?limit=200`]) {
    const listed = await call(`${gate.url}${path}`, { headers: control })
    t.equal(listed.status, 200, path)
    for (const id of receipts) t.notMatch(JSON.stringify(listed.body), id, `${path.split('?')[0]}: the forged attempt is not listed`)
  }
  // the genuine token is still filed under its id
  const genuine = await call(`${gate.url}/gate/evaluate`, { body: request('POST', '/pets'), headers: { 'x-gate-capability': Buffer.from(JSON.stringify(victim)).toString('base64url') } })
  t.match((genuine.body as Answer).receipt, { capability_id: victim.id, verdict: { verdict: 'allow' } })
  t.equal((genuine.body as Answer).receipt.metadata?.gate_presented_capability, undefined)
})
