// examples/protect as its README runs it: the sample API behind the real `gate api protect`, a
// capability issued and revoked, the approval flow, and discovery pinned with --spec-sha256.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { sha256Hex } from '@gate/sdk'
import { startExampleScript } from '@gate/sdk/middleware-testing'
import { CONTROL_TOKEN, issueToken, readStoredReceipt, revokeToken, runProtect, startProtect } from '../testing/api-protect-fixture.js'

const EXAMPLE_DIR = fileURLToPath(new URL('../../../examples/protect/', import.meta.url))

t.test('examples/protect works as its README says', async t => {
  const upstream = await startExampleScript(t, join(EXAMPLE_DIR, 'sample-api.mjs'))
  const dir = t.testdir()
  const store = join(dir, 'receipts.db')
  const gate = await startProtect(t, ['--upstream', upstream, '--spec', join(EXAMPLE_DIR, 'openapi.yaml'), '--receipt-store', store])
  t.match(gate.output(), /protecting http:\/\/127\.0\.0\.1:\d+ with 6 routes on http:\/\/127\.0\.0\.1:\d+/, 'the startup line the README shows')
  const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const r = await request(gate.url + path, { method: method as 'GET', headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers }, body })
    const text = await r.body.text()
    return { status: r.statusCode, headers: r.headers, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) }
  }

  const list = await send('GET', '/pets')
  t.equal(list.status, 200, 'a safe method is forwarded')
  t.match(list.headers['x-gate-receipt-id'], /^[0-9a-f]{64}$/)
  const refused = await send('POST', '/pets', {}, '{"name":"Tom"}')
  t.equal(refused.status, 403)
  t.match(refused.json, { error: 'gate_access_denied', message: 'capability required: POST /pets is deny-by-default' })

  const { token, header } = await issueToken(gate, ['POST /pets'])
  const created = await send('POST', '/pets', { 'x-gate-capability': header }, '{"name":"Tom"}')
  t.equal(created.status, 201, 'with a capability: forwarded, 201')
  t.match(created.json, { name: 'Tom' })
  const final = await readStoredReceipt(store, String(created.headers['x-gate-receipt-id']))
  t.equal(final?.response_status, 201, 'the receipt records the status 201')

  t.equal(await revokeToken(gate, token.id), 200)
  const afterRevoke = await send('POST', '/pets', { 'x-gate-capability': header }, '{"name":"Tom"}')
  t.equal(afterRevoke.status, 403)
  t.match(afterRevoke.json?.suggestion, /fresh/, 'with a suggestion to request a fresh token')

  const adopt = await issueToken(gate, ['POST /pets/{id}/adopt'])
  const pending = await send('POST', '/pets/1/adopt', { 'x-gate-capability': adopt.header })
  t.equal(pending.status, 409)
  t.match(pending.json, { error: 'gate_approval_required', message: 'approval required for POST /pets/{id}/adopt', kernel_receipt_id: /^[0-9a-f]{64}$/ })
  const approvalId = String(pending.json?.approval_id)
  t.equal(pending.json?.resume_path, `/approvals/${approvalId}/respond`)
  const approved = await send('POST', `/approvals/${approvalId}/respond`, { authorization: `Bearer ${CONTROL_TOKEN}` }, '{"decision":"approve"}')
  t.equal(approved.status, 200)
  const adopted = await send('POST', '/pets/1/adopt', { 'x-gate-capability': adopt.header, 'x-gate-approval-id': approvalId })
  t.equal(adopted.status, 200, 'the retry with X-Gate-Approval-Id is forwarded')
  t.match(adopted.json, { id: '1', adopted: true })
  await gate.stop()

  // "Without --spec": discovery from the API itself, pinned to the reviewed document's hash
  const specHash = sha256Hex(readFileSync(join(EXAMPLE_DIR, 'openapi.yaml')))
  const discovered = await startProtect(t, ['--upstream', upstream, '--receipt-store', join(dir, 'discovered.db'), '--spec-sha256', specHash])
  t.equal((await request(`${discovered.url}/pets`)).statusCode, 200, 'the pinned, discovered document is served')
  const wrongPin = await runProtect(['--upstream', upstream, '--receipt-store', join(dir, 'wrong.db'), '--spec-sha256', 'f'.repeat(64)])
  t.not(wrongPin.code, 0, 'a different document refuses to start')
  t.match(wrongPin.stdout + wrongPin.stderr, specHash, 'naming the document hash')
  t.match(wrongPin.stdout + wrongPin.stderr, 'f'.repeat(64), 'and the pinned one')
})
