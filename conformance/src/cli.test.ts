// The gate-conformance command through its public surface: a child process per case, exit codes
// 0 / 1 / 2, the table and the JSON report, against the fault-free and a faulty broken sidecar.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { CHECKS, DEFAULT_SPEC_TEXT, type Report } from './index.js'
import { startBrokenSidecar, type SidecarFault } from './testing/broken-sidecar.js'

const CLI = fileURLToPath(new URL('./cli.js', import.meta.url))
const TOKEN = 'cli-test-control-token'

function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, GATE_CONTROL_TOKEN: '', ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', c => (stdout += c))
    child.stderr.on('data', c => (stderr += c))
    child.on('close', code => resolve({ code, stdout, stderr }))
  })
}

async function fake(t: Test, faults: SidecarFault[] = [], strictNonces = false): Promise<string> {
  const sidecar = await startBrokenSidecar({ controlToken: TOKEN, faults, strictNonces })
  t.teardown(() => sidecar.close())
  return sidecar.url
}

t.test('usage errors exit 2 and print the usage', async t => {
  for (const args of [
    [],
    ['--bogus'],
    ['--sidecar'],
    ['--sidecar', 'ftp://x'],
    ['--sidecar', 'http://127.0.0.1:9', '--only', 'no.such-check'],
    ['--sidecar', 'http://127.0.0.1:9', '--request-timeout-ms', '5s'],
    ['--sidecar', 'http://127.0.0.1:9', '--proxy-upstream', 'http://127.0.0.1:9'],
    ['--start-sidecar', '--proxy-upstream', '127.0.0.1:9'],
  ]) {
    const r = await runCli(args)
    t.equal(r.code, 2, `gate-conformance ${args.join(' ')} exits 2`)
    t.match(r.stderr, 'gate-conformance:')
  }
  const r = await runCli(['--sidecar', 'http://127.0.0.1:9', '--spec', '/nonexistent/spec.json'])
  t.equal(r.code, 2, 'an unreadable --spec exits 2')
  t.match(r.stderr, 'cannot read the document')
  const dir = t.testdir({ 'short.seed': 'abcd\n' })
  const seed = await runCli(['--sidecar', 'http://127.0.0.1:9', '--issuer-seed-file', join(dir, 'short.seed')])
  t.equal(seed.code, 2, 'a malformed --issuer-seed-file exits 2')
  t.match(seed.stderr, 'must contain 64 hex characters')
})

t.test('--issuer-seed-file signs the delegation checks with a key the sidecar trusts', async t => {
  const issuerSeed = 'ab'.repeat(32)
  const dir = t.testdir({ 'issuer.seed': issuerSeed + '\n' })
  const { createSigner, hexToBytes } = await import('@gate/sdk')
  const sidecar = await startBrokenSidecar({ controlToken: TOKEN, trustedIssuers: [createSigner({ secret: hexToBytes(issuerSeed)! }).publicKey] })
  t.teardown(() => sidecar.close())
  const only = ['--only', 'capabilities.delegation-widening-denied,capabilities.token-fields-enforced']
  const without = JSON.parse((await runCli(['--sidecar', sidecar.url, '--json', '--no-sdk', ...only])).stdout) as Report
  t.same(without.results.map(x => [x.result, x.detail]), [['SKIP', 'needs --issuer-seed-file'], ['SKIP', 'needs --issuer-seed-file']])
  const withSeed = JSON.parse((await runCli(['--sidecar', sidecar.url, '--json', '--no-sdk', '--issuer-seed-file', join(dir, 'issuer.seed'), ...only])).stdout) as Report
  t.same(withSeed.results.map(x => x.result), ['PASS', 'PASS'])
})

t.test('--proxy-upstream: the suite is the upstream of the proxy under test and runs the proxy.* checks', async t => {
  // a free port for the suite's recording upstream, named to the proxy before the suite listens on it
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as AddressInfo
  await new Promise(resolve => probe.close(resolve))
  const proxy = await startBrokenSidecar({ controlToken: TOKEN, upstream: `http://127.0.0.1:${port}` })
  t.teardown(() => proxy.close())
  const only = ['--only', 'proxy.routing-headers-dropped,proxy.path-variants-not-forwarded']
  const without = JSON.parse((await runCli(['--sidecar', proxy.url, '--json', '--no-sdk', ...only])).stdout) as Report
  t.ok(without.results.every(x => x.result === 'SKIP' && /needs --proxy-upstream HOST:PORT/.test(x.detail ?? '')), 'skipped without it, saying why')
  const r = await runCli(['--sidecar', proxy.url, '--json', '--no-sdk', '--proxy-upstream', `127.0.0.1:${port}`, ...only])
  t.equal(r.code, 0, r.stderr)
  t.same((JSON.parse(r.stdout) as Report).results.map(x => x.result), ['PASS', 'PASS'])
})

t.test('--help, --list and --print-default-spec exit 0', async t => {
  t.match((await runCli(['--help'])).stdout, 'Usage: gate-conformance')
  const list = await runCli(['--list', '--json'])
  t.equal(list.code, 0)
  t.same((JSON.parse(list.stdout) as { id: string }[]).map(c => c.id), CHECKS.map(c => c.id))
  const spec = await runCli(['--print-default-spec'])
  t.equal(spec.stdout, DEFAULT_SPEC_TEXT)
})

t.test('a conformant sidecar exits 0; the JSON report lists every check', async t => {
  const url = await fake(t)
  const r = await runCli(['--sidecar', url, '--json', '--no-sdk'], { GATE_CONTROL_TOKEN: TOKEN })
  t.equal(r.code, 0, r.stderr)
  const report = JSON.parse(r.stdout) as Report
  t.equal(report.ok, true)
  t.equal(report.results.length, CHECKS.length)
  t.same(report.results.filter(x => x.result === 'FAIL').map(x => x.id), [])
  for (const x of report.results.filter(x => x.id.startsWith('sdk.'))) t.same([x.result, x.detail], ['SKIP', 'skipped with --no-sdk'])
})

t.test('without a control token the issue/revoke checks are skipped with the reason', async t => {
  const url = await fake(t)
  const r = await runCli(['--sidecar', url, '--json', '--no-sdk', '--only', 'capabilities.valid-token-allows,capabilities.expired-denied'])
  t.equal(r.code, 0, r.stderr)
  const results = (JSON.parse(r.stdout) as Report).results
  const valid = results.find(x => x.id === 'capabilities.valid-token-allows')
  const expired = results.find(x => x.id === 'capabilities.expired-denied')
  t.same([valid?.result, valid?.detail], ['SKIP', 'needs --control-token'])
  t.equal(expired?.result, 'PASS', 'an expired token is minted locally instead')
})

t.test('a required failure exits 1 and the table shows it; an advisory failure alone exits 0', async t => {
  const url = await fake(t, ['allow-mutating-without-token', 'policy-hash-zero'])
  const r = await runCli(['--sidecar', url, '--only', 'evaluate.deny-unsafe-no-token,receipt.policy-hash'])
  t.equal(r.code, 1)
  t.match(r.stdout, /evaluate\.deny-unsafe-no-token\s+FAIL\s/)
  t.match(r.stdout, /receipt\.policy-hash\s+FAIL\s[^\n]*\n[^\n]*\(advisory\)/)
  t.match(r.stdout, 'failure: POST /pets (route /pets): expected deny, got allow')
  t.match(r.stdout, 'NOT CONFORMANT')
  t.match(r.stdout, /^0 passed, 2 failed \(1 required, 1 advisory\), 0 skipped in /m, 'the summary counts them in plain words')
  const advisory = await runCli(['--sidecar', url, '--only', 'receipt.policy-hash'])
  t.equal(advisory.code, 0)
  const passing = await runCli(['--sidecar', url, '--only', 'evaluate.allow-safe-get'])
  t.match(passing.stdout, /^1 passed, none failed, 0 skipped in /m)
})

t.test('--strict-nonces runs the nonces.* checks and skips the rest; a reusable nonce exits 1', async t => {
  const nonceIds = CHECKS.filter(c => c.needs?.includes('strict-nonces')).map(c => c.id)
  // the fake's nonces live 60 s (the default), so the expiry check skips instead of waiting for one
  const url = await fake(t, [], true)
  const r = await runCli(['--sidecar', url, '--json', '--strict-nonces'], { GATE_CONTROL_TOKEN: TOKEN })
  t.equal(r.code, 0, r.stderr)
  const results = (JSON.parse(r.stdout) as Report).results
  t.same(results.filter(x => x.result === 'PASS').map(x => x.id), nonceIds.filter(id => id !== 'nonces.expired-denied'))
  const expired = results.find(x => x.id === 'nonces.expired-denied')
  t.equal(expired?.result, 'SKIP', 'long-lived nonces skip the expiry check')
  t.match(expired?.detail, /nonces live 60 s.*--nonce-ttl-secs 2/, 'the reason says how long nonces live and how to run the check')
  t.ok(results.filter(x => !nonceIds.includes(x.id)).every(x => x.result === 'SKIP'), 'every other check is skipped')
  const faulty = await fake(t, ['nonce-reusable'], true)
  const bad = await runCli(['--sidecar', faulty, '--strict-nonces'], { GATE_CONTROL_TOKEN: TOKEN })
  t.equal(bad.code, 1)
  t.match(bad.stdout, /nonces\.single-use\s+FAIL\s/)
  const plain = await runCli(['--sidecar', url, '--json', '--only', nonceIds.join(',')], { GATE_CONTROL_TOKEN: TOKEN })
  t.ok((JSON.parse(plain.stdout) as Report).results.every(x => x.result === 'SKIP' && /needs --strict-nonces/.test(x.detail ?? '')), 'without the flag they are skipped, saying why')
})

t.test('a sidecar that is not there fails the required checks, bounded, and exits 1', async t => {
  const closed = await startBrokenSidecar()
  const closedUrl = closed.url
  await closed.close()
  const r = await runCli(['--sidecar', closedUrl, '--json', '--no-sdk', '--only', 'health.live,evaluate.allow-safe-get'])
  t.equal(r.code, 1)
  for (const x of (JSON.parse(r.stdout) as Report).results) t.match(x.detail ?? '', 'ECONNREFUSED')
})

t.test('--spec with another document: checks whose routes it lacks are skipped, saying so', async t => {
  const doc = JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/things': { get: { responses: {} }, post: { responses: {} } } } })
  const sidecar = await startBrokenSidecar({ controlToken: TOKEN, specText: doc })
  t.teardown(() => sidecar.close())
  const path = join(t.testdir(), 'things.json')
  await writeFile(path, doc)
  const r = await runCli(['--sidecar', sidecar.url, '--spec', path, '--json', '--no-sdk'], { GATE_CONTROL_TOKEN: TOKEN })
  t.equal(r.code, 0, r.stderr)
  const report = JSON.parse(r.stdout) as Report
  t.same(report.results.filter(x => x.result === 'FAIL').map(x => `${x.id}: ${x.detail}`), [])
  const skipped = Object.fromEntries(report.results.filter(x => x.result === 'SKIP').map(x => [x.id, x.detail]))
  t.match(skipped['evaluate.side-effects-false-allows'], `the document (${path}) has no route with x-gate-side-effects: false`)
  t.match(skipped['evaluate.approval-required-denies'], 'has no route with x-gate-approval-required: true')
  t.match(skipped['evaluate.param-matches-one-segment'], 'has no route whose pattern ends in a {param} segment')
  t.equal(report.results.find(x => x.id === 'evaluate.allow-safe-get')?.result, 'PASS')
})
