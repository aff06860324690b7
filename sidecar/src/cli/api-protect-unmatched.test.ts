// Routes outside the document (issue 45): by spec 01's method rule an undocumented GET is forwarded
// without a capability (a `GET /secret` the OpenAPI file never mentions reaches the upstream), and
// `--deny-unmatched` makes every request that matches no operation deny-by-default, whatever its
// method, through the real `gate api protect` and `gate sidecar`.
import t, { type Test } from 'tap'
import { request } from 'undici'
import { createSigner, signCapability } from '@gate/sdk'
import { readFileSync } from 'node:fs'
import { UNMATCHED_SUGGESTION } from '../kernel/grants.js'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate } from '../testing/spawn-gate.js'
import { checkStoredReceipts } from '../testing/stored-receipts.js'
import { startUpstreamApp } from '../testing/upstream-app.js'

const TOKEN = 'unmatched-test-control-token-0123456789'

async function start(t: Test, extra: string[] = []) {
  const files = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed, '--listen', '127.0.0.1:0', ...extra], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const send = async (method: string, path: string, headers: Record<string, string> = {}) => {
    const res = await request(gate.url + path, { method: method as 'GET', headers })
    const text = await res.body.text()
    return { status: res.statusCode, text, receiptId: res.headers['x-gate-receipt-id'] as string | undefined }
  }
  const authority = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') })
  return { gate, upstream, send, files, authority }
}

t.test('without the flag, an undocumented GET is forwarded by the method rule; an undocumented POST is not', async t => {
  const { gate, upstream, send } = await start(t)
  t.match(gate.output(), /unmatched requests by the method rule/)
  const secret = await send('GET', '/secret')
  t.equal(secret.status, 200, 'GET /secret, in no operation of the document, is forwarded')
  t.ok(upstream.received.some(r => r.url === '/secret'), 'the upstream got it')
  t.equal((await send('POST', '/secret')).status, 403, 'a mutating method needs a capability')
})

t.test('--deny-unmatched: every method on an undocumented path is denied with a receipt; documented routes are unchanged', async t => {
  const { gate, upstream, send, files, authority } = await start(t, ['--deny-unmatched'])
  t.match(gate.output(), /unmatched requests deny-by-default/)
  const ids: string[] = []
  for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE']) {
    const r = await send(method, '/secret')
    t.equal(r.status, 403, `${method} /secret: 403`)
    t.match(r.receiptId, /^[0-9a-f]{64}$/, `${method} /secret: a receipt`)
    if (r.receiptId !== undefined) ids.push(r.receiptId)
    if (method === 'GET') {
      t.match(JSON.parse(r.text), { error: 'gate_access_denied', message: 'capability required: GET /secret is deny-by-default', suggestion: UNMATCHED_SUGGESTION })
    }
  }
  t.notOk(upstream.received.some(r => r.url.startsWith('/secret')), 'none reached the upstream')
  t.equal((await send('GET', '/pets')).status, 200, 'a documented safe route still passes without a token')
  t.equal((await send('POST', '/pets')).status, 403, 'a documented mutating route still needs a capability')

  // deny-by-default, like a mutating route: a capability granting exactly this method and path lets it through
  const now = Math.floor(Date.now() / 1000)
  const token = signCapability({ schema: 'gate.capability.v1', id: 'cap-unmatched', subject: 'ab'.repeat(32), scope: { grants: [{ server_id: 'http', tool_name: 'GET /secret' }] }, issued_at: now - 10, expires_at: now + 600 }, authority)
  const granted = await send('GET', '/secret', { 'x-gate-capability': Buffer.from(JSON.stringify(token)).toString('base64url') })
  t.equal(granted.status, 200, 'a capability granting GET /secret is honoured')

  t.equal(await gate.stop('SIGTERM'), 0)
  const { missing, invalid, receipts } = await checkStoredReceipts(files.db, ids, authority.publicKey)
  t.same(missing, [], 'every denial is stored')
  t.same(invalid, [], 'and verifies')
  for (const receipt of receipts.values()) t.equal(receipt.response_status, 403)
})

t.test('the flag is in gate api protect --help and gate sidecar --help; gate sidecar refuses it without --spec', async t => {
  for (const command of [['api', 'protect'], ['sidecar']]) {
    const help = await runGate([...command, '--help'])
    t.equal(help.code, 0)
    t.match(help.stdout, /--deny-unmatched {2,}a request whose path matches no operation of the OpenAPI document is/, `gate ${command.join(' ')} --help`)
  }
  const refused = await runGate(['sidecar', '--deny-unmatched', '--allow-ephemeral-receipts', '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.equal(refused.code, 2, 'a usage error')
  t.match(refused.stderr, /--deny-unmatched needs --spec FILE/)
})
