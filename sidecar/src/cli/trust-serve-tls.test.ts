// gate trust serve's transport: HTTPS with --tls-cert/--tls-key; plaintext only on loopback unless
// --allow-plaintext-remote (spec 03, Authentication 5).
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { runGate, spawnGate } from '../testing/spawn-gate.js'

const TOKEN = 'tls-service-token-0123456789abcdef'
const dir = t.testdir({ token: TOKEN })
const noEnv = { GATE_CONTROL_TOKEN: '' }

// a self-signed certificate for 127.0.0.1, made with the openssl command
const made = spawnSync('openssl', [
  'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
  '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
], { encoding: 'utf8' })
if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`)

t.test('with --tls-cert and --tls-key it serves HTTPS only', async t => {
  const serve = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', join(dir, 'receipts.db'), '--service-token-file', join(dir, 'token'), '--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem')], { env: noEnv })
  t.teardown(() => serve.stop('SIGKILL'))
  t.match(serve.url, /^https:\/\/127\.0\.0\.1:\d+$/)
  const dispatcher = new Agent({ connect: { ca: readFileSync(join(dir, 'cert.pem')) } })
  t.teardown(() => dispatcher.close())
  const health = await request(`${serve.url}/health`, { dispatcher })
  t.equal(health.statusCode, 200)
  t.match(await health.body.json(), { status: 'healthy', clustered: false })
  const query = await request(`${serve.url}/v1/receipts/query`, { dispatcher, headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(query.statusCode, 200)
  await query.body.dump()
  const plain = await request(serve.url.replace('https:', 'http:') + '/health').then(
    r => r.statusCode,
    (err: Error) => err.message,
  )
  t.not(plain, 200, 'plain HTTP is not served on the TLS port')
  const untrusted = await request(`${serve.url}/health`).then(() => 'answered', (err: Error & { code?: string }) => err.code ?? err.message)
  t.not(untrusted, 'answered', 'a client that does not trust the certificate gets no answer')
})

t.test('plaintext is refused off loopback unless forced; TLS flags go together', async t => {
  const base = ['trust', 'serve', '--receipt-db', join(dir, 'receipts.db'), '--service-token-file', join(dir, 'token')]
  const cases: [string[], number, RegExp][] = [
    [[...base, '--listen', '0.0.0.0:0'], 2, /refusing to serve trust-control in plaintext on 0\.0\.0\.0 \(not a loopback address\)/],
    [[...base, '--listen', '127.0.0.1:0', '--tls-cert', join(dir, 'cert.pem')], 2, /--tls-cert and --tls-key go together/],
    [[...base, '--listen', '127.0.0.1:0', '--tls-cert', join(dir, 'missing.pem'), '--tls-key', join(dir, 'key.pem')], 1, /cannot read --tls-cert .*missing\.pem: ENOENT/],
  ]
  for (const [args, code, message] of cases) {
    const r = await runGate(args, { env: noEnv })
    t.equal(r.code, code, args.slice(-2).join(' '))
    t.match(r.stderr, message)
  }
  const forced = await spawnGate([...base, '--listen', '0.0.0.0:0', '--allow-plaintext-remote'], { env: noEnv })
  t.teardown(() => forced.stop('SIGKILL'))
  t.match(forced.output(), /plaintext on a non-loopback address \(--allow-plaintext-remote\)/)
})
