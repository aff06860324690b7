// End-to-end: `gate capability issue|revoke` against the real `gate sidecar` (pets spec, a control token).
import t from 'tap'
import { ANONYMOUS_CALLER, createSigner, generateSecret, uuidv7 } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'

const TOKEN = 'capability-cli-control-token'
const subject = createSigner({ secret: generateSecret() }).publicKey

let gate!: GateProcess
t.before(async () => {
  const { spec, seed, db } = await gateFiles(t)
  gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
})

function capability(args: string[], token = TOKEN) {
  return runGate(['capability', ...args, '--control-url', gate.url], { env: { GATE_CONTROL_TOKEN: token } })
}

async function postPets(header: string): Promise<{ verdict: string; reason?: string }> {
  const r = await call(`${gate.url}/gate/evaluate`, {
    body: { request_id: uuidv7(), method: 'POST', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) },
    headers: { 'x-gate-capability': header },
  })
  return (r.body as { verdict: { verdict: string; reason?: string } }).verdict
}

t.test('issue prints the token JSON then its header value; a grant for a route of the spec gives no warning', async t => {
  const r = await capability(['issue', '--subject', subject, '--grant', 'POST /pets', '--ttl', '600'])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stderr, '')
  const [json, header] = r.stdout.trim().split('\n')
  t.same(JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')), JSON.parse(json!))
  t.equal((await postPets(header!)).verdict, 'allow')
})

t.test('issue warns about a grant that covers no route of the loaded spec, and issues it anyway', async t => {
  const r = await capability(['issue', '--subject', subject, '--grant', 'POST /pet', '--grant', 'GET /pets/*'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, 'gate capability issue: warning: grant "POST /pet" covers no route of the loaded OpenAPI document')
  t.match(r.stderr, 'gate check --spec FILE')
  t.notMatch(r.stderr, '"GET /pets/*"', 'a wildcard that covers a route is fine')
  t.equal(r.stdout.trim().split('\n').length, 2, 'the token is issued')
  const hostile = await capability(['issue', '--subject', subject, '--grant', 'POST /x\u001b[2J\nforged'])
  t.match(hostile.stderr, 'grant "POST /x\\u001b[2J\\nforged" covers no route', 'control characters are escaped, never printed')
  t.notMatch(hostile.stderr, '\u001b')
})

t.test('revoke takes the id or the token itself; the token is denied afterwards', async t => {
  const issued = await capability(['issue', '--subject', subject, '--grant', 'POST /pets'])
  const [json, header] = issued.stdout.trim().split('\n')
  const id = (JSON.parse(json!) as { id: string }).id
  const r = await capability(['revoke', header!])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stderr, '', 'an id this sidecar issued: no warning')
  t.same(JSON.parse(r.stdout), { capabilityId: id, revoked: true, newlyRevoked: true })
  t.match(await postPets(header!), { verdict: 'deny', reason: /revoked/ })
  const again = await capability(['revoke', id])
  t.same(JSON.parse(again.stdout), { capabilityId: id, revoked: true, newlyRevoked: false }, 'by id, already revoked')
})

t.test('revoking an id this store never issued warns on stderr and in the answer, and revokes it', async t => {
  const r = await capability(['revoke', 'cap_never-issued'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, 'gate capability revoke: warning: no capability cap_never-issued was issued here')
  const answer = JSON.parse(r.stdout) as { revoked: boolean; warnings: string[] }
  t.equal(answer.revoked, true)
  t.match(answer.warnings, [/no capability cap_never-issued was issued here; it is recorded as revoked anyway/])
})

t.test('a wrong control token exits 1 with the 401 and the way out', async t => {
  const r = await capability(['revoke', 'cap_x'], 'not-the-sidecar-token')
  t.equal(r.code, 1)
  t.match(r.stderr, /answered 401: missing or invalid bearer token.*GATE_CONTROL_TOKEN/)
})
