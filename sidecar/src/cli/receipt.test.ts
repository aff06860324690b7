// End-to-end: `gate receipt list|verify|explain` against a store written by a real `gate sidecar`, locally
// (--receipt-db) and remotely (--control-url to a real `gate trust serve`).
import t from 'tap'
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner, generateSecret, sha256Hex, signHttpReceiptJson, uuidv7, type HttpReceipt } from '@gate/sdk'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'
import { GATE_MAIN, runGate, spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { createReceiptRow, type StoredReceipt } from '@gate/trust'
import { openReceiptStore } from '../stores/index.js'

// a real sidecar's evaluations and a trust-control process: beyond tap's 300 s per file on a busy host
t.setTimeout(900_000)
const CONTROL_TOKEN = 'sidecar-control-token-0123456789'
const SERVICE_TOKEN = 'trust-service-token-0123456789abcdef'
const ACME_TOKEN = 'acme-read-token-0123456789abcdef'

const dir = t.testdir({ 'pets.yaml': PETS_SPEC_YAML, 'service-token': SERVICE_TOKEN, 'acme-token': ACME_TOKEN })
const db = join(dir, 'receipts.db')
const seedFile = join(dir, 'seed')
const seed = generateSecret('ed25519')
writeFileSync(seedFile, Buffer.from(seed).toString('hex') + '\n', { mode: 0o600 })
const signer = createSigner({ secret: seed })
// Another authority's key: its rows can never get a core form from this one's processes.
const foreignSeedFile = join(dir, 'foreign-seed')
const foreignSeed = generateSecret('ed25519')
writeFileSync(foreignSeedFile, Buffer.from(foreignSeed).toString('hex') + '\n', { mode: 0o600 })
const foreign = createSigner({ secret: foreignSeed })
const now = Math.floor(Date.now() / 1000)

let sidecar!: GateProcess
let trust!: GateProcess
const rows: StoredReceipt[] = []
let decisionId = ''
let finalId = ''
let pendingId = ''
let capabilityId = ''

t.before(async () => {
  sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', join(dir, 'pets.yaml'), '--receipt-store', db, '--authority-seed-file', seedFile], {
    env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
  })
  t.teardown(() => sidecar.stop('SIGKILL'))
  const issued = await call(`${sidecar.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: signer.publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 600 },
    headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
  })
  const capability = (issued.body as { capability: { id: string } }).capability
  capabilityId = capability.id
  const header = Buffer.from(JSON.stringify(capability)).toString('base64url')
  for (let n = 0; n < 90; n++) {
    const tenant = ['acme', 'globex', null][n % 3]
    const [method, path, headers] = ([['GET', '/pets', {}], ['POST', '/pets', {}], ['POST', '/pets', { 'x-gate-capability': header }]] as const)[n % 3]!
    const r = await call(`${sidecar.url}/gate/evaluate`, {
      body: { request_id: uuidv7(), method, path, route_pattern: path, caller: { subject: `u${n}`, auth_method: { method: 'bearer', token_hash: sha256Hex(`t${n}`) }, tenant }, timestamp: now },
      headers,
    })
    if (r.status !== 200) throw new Error(r.text)
  }
  // The first page read through trust-control's routes gets its core form made and stored (core receipts
  // on first read); the other 40 stay in their HTTP form. Stop the sidecar (its shutdown flushes the
  // receipt log), then add what only the store API writes: costed receipts, a decision with its final
  // receipt, and one row of another authority's key.
  const firstRead = await call(`${sidecar.url}/v1/receipts/query?limit=50`, { headers: { authorization: `Bearer ${CONTROL_TOKEN}` } })
  if (firstRead.status !== 200) throw new Error(firstRead.text)
  await sidecar.stop('SIGTERM')
  const store = await openReceiptStore(db)
  const decision = sign({ verdict: { verdict: 'allow' }, metadata: { gate_http_status_scope: 'decision' }, response_status: 200 })
  const final = sign({ verdict: { verdict: 'allow' }, metadata: { gate_http_status_scope: 'final', gate_decision_receipt_id: decision.receipt.id }, response_status: 201 })
  const pending = sign({ verdict: { verdict: 'cancel', reason: 'upstream timed out' }, metadata: null, response_status: 500 }, foreign)
  decisionId = decision.receipt.id
  finalId = final.receipt.id
  pendingId = pending.receipt.id
  await store.log.appendMany([
    createReceiptRow(decision.receipt, decision.json, { tenant: 'acme', costUnits: 1200, costCurrency: 'USD', coreJson: null }),
    createReceiptRow(final.receipt, final.json, { tenant: 'acme', costUnits: 40, costCurrency: 'EUR' }),
    createReceiptRow(pending.receipt, pending.json, { tenant: 'globex' }),
  ])
  for await (const row of store.query.iterate()) rows.push(row)
  await store.close()
  trust = await spawnGate(
    ['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', seedFile, '--service-token-file', join(dir, 'service-token'), '--tenant-token', `acme=${join(dir, 'acme-token')}`],
    { env: { GATE_CONTROL_TOKEN: '' } },
  )
  t.teardown(() => trust.stop('SIGKILL'))
})

function sign(extra: Pick<HttpReceipt, 'verdict' | 'metadata' | 'response_status'>, by = signer) {
  return signHttpReceiptJson(
    {
      request_id: uuidv7(),
      route_pattern: '/orders/{id}',
      method: 'PUT',
      caller_identity_hash: sha256Hex('caller'),
      receipt_kind: 'mediated_decision',
      boundary_class: 'prevent',
      tool_origin: 'caller_executed',
      redaction_mode: 'none',
      evidence: [{ guard_name: 'CapabilityGuard', verdict: true, details: 'grant PUT /orders/{id}' }],
      timestamp: now - 3600,
      content_hash: sha256Hex('content'),
      policy_hash: sha256Hex('policy'),
      trust_level: 'mediated',
      capability_id: 'cap-orders',
      ...extra,
    },
    by,
  )
}

function gate(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [GATE_MAIN, ...args], { env: { ...process.env, GATE_CONTROL_TOKEN: '', ...options.env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', c => (stdout += c))
    child.stderr.on('data', c => (stderr += c))
    child.on('close', code => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? '')
  })
}

/**
 * The request a printed receipt records: its HTTP form names it, its core form in action.parameters.
 * (A core receipt's id is its own content address, not the HTTP receipt's, so rows are matched by request.)
 */
function requestOf(receipt: Record<string, unknown>): unknown {
  return receipt.request_id ?? (receipt.action as { parameters?: { request_id?: unknown } } | undefined)?.parameters?.request_id
}

function lines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter(line => line !== '')
    .map(line => JSON.parse(line) as Record<string, unknown>)
}

t.test('list --admin-all prints one stored receipt per line, oldest first, 50 by default', async t => {
  const r = await gate(['receipt', 'list', '--receipt-db', db, '--admin-all'])
  t.equal(r.code, 0, r.stderr)
  const out = lines(r.stdout)
  t.equal(out.length, 50)
  t.same(out.map(requestOf), rows.slice(0, 50).map(x => x.requestId))
  t.match(r.stderr, `next cursor: ${rows[49]!.seq}`)
  const next = await gate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--cursor', String(rows[49]!.seq), '--limit', '200'])
  t.same(lines(next.stdout).map(requestOf), rows.slice(50).map(x => x.requestId), 'the next page continues after the cursor')
  t.notMatch(next.stderr, /next cursor/, 'no cursor after a short page')
  const stored = rows.filter(x => x.coreJson !== null)
  t.same(stored.map(x => x.seq), Array.from({ length: 50 }, (_, i) => i + 1), 'the receipts read once through trust-control have their core form stored, no others')
  t.ok(stored.every(x => r.stdout.split('\n').includes(x.coreJson!)), 'printed byte for byte as stored')
})

t.test('list --newest prints the --limit newest matches, newest first, locally and over --control-url', async t => {
  const newest = (predicate: (r: StoredReceipt) => boolean, n: number) => rows.filter(predicate).slice(-n).reverse().map(r => r.requestId)
  const local = await gate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--newest', '--limit', '3'])
  t.equal(local.code, 0, local.stderr)
  t.same(lines(local.stdout).map(requestOf), newest(() => true, 3))
  t.match(local.stderr, `the 3 newest of ${rows.length} matching receipts, newest first`)
  const remote = await gate(['receipt', 'list', '--control-url', trust.url, '--newest', '--outcome', 'deny', '--limit', '2'], { env: { GATE_CONTROL_TOKEN: SERVICE_TOKEN } })
  t.equal(remote.code, 0, remote.stderr)
  t.same(lines(remote.stdout).map(requestOf), newest(r => r.outcome === 'deny', 2), 'filters apply before the newest are taken')
  const all = await gate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--newest', '--limit', '200'])
  t.same(lines(all.stdout).map(requestOf), newest(() => true, 200), 'every receipt when fewer match than --limit')
  t.equal(all.stderr, '', 'and nothing to say about older ones')
})

t.test('list filters: each spec option, locally and over --control-url', async t => {
  const cases: [string[], (r: StoredReceipt) => boolean][] = [
    [['--capability', capabilityId], r => r.capabilityId === capabilityId],
    [['--tool-server', 'http'], () => true],
    [['--tool-name', 'POST /pets'], r => r.toolName === 'POST /pets'],
    [['--outcome', 'deny'], r => r.outcome === 'deny'],
    [['--outcome', 'cancelled'], r => r.outcome === 'cancelled'],
    [['--since', String(now - 60)], r => r.timestamp >= now - 60],
    [['--until', String(now - 60)], r => r.timestamp <= now - 60],
    [['--min-cost', '1000', '--cost-currency', 'USD'], r => r.costCurrency === 'USD' && (r.costUnits ?? -1) >= 1000],
    [['--max-cost', '100', '--cost-currency', 'EUR'], r => r.costCurrency === 'EUR' && (r.costUnits ?? Infinity) <= 100],
    [['--cost-currency', 'EUR'], r => r.costCurrency === 'EUR'],
    [['--limit', '3'], (() => { let n = 0; return () => n++ < 3 })()],
  ]
  for (const [args, predicate] of cases) {
    const expected = rows.filter(predicate).slice(0, 200).map(r => r.requestId)
    const local = await gate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--limit', args.includes('--limit') ? args[args.indexOf('--limit') + 1]! : '200', ...args.filter((a, i) => a !== '--limit' && args[i - 1] !== '--limit')])
    t.equal(local.code, 0, local.stderr)
    t.same(lines(local.stdout).map(requestOf), expected, `local ${args.join(' ')}`)
  }
  for (const [args, predicate] of cases.slice(0, 10)) {
    const expected = rows.filter(predicate).slice(0, 200).map(r => r.requestId)
    const remote = await gate(['receipt', 'list', '--control-url', trust.url, '--limit', '200', ...args], { env: { GATE_CONTROL_TOKEN: SERVICE_TOKEN } })
    t.equal(remote.code, 0, remote.stderr)
    t.same(lines(remote.stdout).map(requestOf), expected, `remote ${args.join(' ')}`)
  }
})

t.test('list --tenant reads only that tenant, locally; a tenant token does the same remotely', async t => {
  const acme = rows.filter(r => r.tenant === 'acme').map(r => r.requestId)
  const local = await gate(['receipt', 'list', '--receipt-db', db, '--tenant', 'acme', '--limit', '200'])
  t.same(lines(local.stdout).map(requestOf), acme)
  const remote = await gate(['receipt', 'list', '--control-url', trust.url, '--limit', '200'], { env: { GATE_CONTROL_TOKEN: ACME_TOKEN } })
  t.same(lines(remote.stdout).map(requestOf), acme)
  const argvToken = await gate(['receipt', 'list', '--control-url', trust.url, '--control-token', ACME_TOKEN, '--limit', '200'])
  t.same(lines(argvToken.stdout).map(requestOf), acme, '--control-token works too')
  const nobody = await gate(['receipt', 'list', '--receipt-db', db, '--tenant', 'nobody'])
  t.equal(nobody.stdout, '')
})

t.test('list usage errors exit 2 before anything runs; failures exit 1', async t => {
  const missing = join(dir, 'missing.db')
  const cases: [string[], number, RegExp, NodeJS.ProcessEnv?][] = [
    [['receipt', 'list', '--receipt-db', missing, '--tenant', 'a', '--admin-all'], 2, /--tenant and --admin-all are mutually exclusive/],
    [['receipt', 'list', '--receipt-db', db], 2, /exactly one of --tenant ID or --admin-all/],
    [['receipt', 'list', '--receipt-db', db, '--admin-all', '--min-cost', '5'], 2, /--min-cost requires --cost-currency/],
    [['receipt', 'list', '--receipt-db', db, '--admin-all', '--max-cost', '5'], 2, /--max-cost requires --cost-currency/],
    [['receipt', 'list', '--receipt-db', db, '--admin-all', '--min-cost', '9', '--max-cost', '5', '--cost-currency', 'USD'], 2, /--min-cost \(9\) is above --max-cost \(5\)/],
    [['receipt', 'list', '--receipt-db', db, '--admin-all', '--cost-currency', 'usd'], 2, /three uppercase/],
    [['receipt', 'list', '--receipt-db', db, '--admin-all', '--outcome', 'maybe'], 2, /--outcome must be one of/],
    [['receipt', 'list', '--receipt-db', db, '--admin-all', '--since', 'yesterday'], 2, /--since must be an unsigned integer/],
    [['receipt', 'list', '--admin-all'], 2, /--receipt-db PATH or --control-url URL/],
    [['receipt', 'list', '--receipt-db', db, '--control-url', 'http://127.0.0.1:1', '--admin-all'], 2, /either --receipt-db or --control-url/],
    [['receipt', 'list', '--control-url', 'http://127.0.0.1:1', '--admin-all'], 2, /over --control-url the token decides/],
    [['receipt', 'list', '--receipt-db', db, '--admin-all', '--bogus'], 2, /bogus/],
    [['receipt', 'list', '--receipt-db', missing, '--admin-all'], 1, /does not exist/],
    [['receipt', 'nothing'], 2, /unknown subcommand/],
    [['receipt', 'list', '--receipt-db', db, '--admin-all', '--newest', '--cursor', '5'], 2, /--newest .* --cursor .* give one or the other/],
  ]
  for (const [args, code, message] of cases) {
    const r = await gate(args)
    t.equal(r.code, code, args.join(' '))
    t.match(r.stderr, message)
  }
  const denied = await gate(['receipt', 'list', '--control-url', trust.url], { env: { GATE_CONTROL_TOKEN: 'wrong-token-0123456789abcdef' } })
  t.equal(denied.code, 1)
  t.match(denied.stderr, /answered 401: missing or invalid bearer token.*GATE_CONTROL_TOKEN/)
  t.notMatch(denied.stderr, /wrong-token/)
  const help = await gate(['receipt', 'list', '--help'])
  t.equal(help.code, 0)
  for (const flag of ['--capability', '--tool-server', '--tool-name', '--outcome', '--since', '--until', '--min-cost', '--max-cost', '--cost-currency', '--limit', '--cursor', '--newest', '--tenant', '--admin-all', '--receipt-db', '--control-url', '--control-token']) t.match(help.stdout, flag)
})

t.test('a row without its core form prints as stored, or in core form with its authority seed', async t => {
  const asStored = await gate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--outcome', 'cancelled'])
  const [receipt] = lines(asStored.stdout)
  t.equal(receipt!.id, pendingId)
  t.ok('verdict' in receipt!, 'the HTTP form, as stored (no process holding its key converted it)')
  const remote = await gate(['receipt', 'list', '--control-url', trust.url, '--outcome', 'cancelled'], { env: { GATE_CONTROL_TOKEN: SERVICE_TOKEN } })
  t.same(lines(remote.stdout), [receipt], 'trust-control serves it as stored too: never dropped, never re-signed')
  const converted = await gate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--outcome', 'cancelled', '--authority-seed-file', foreignSeedFile])
  const [core] = lines(converted.stdout)
  t.match(core, { decision: { verdict: 'cancelled', reason: 'upstream timed out' }, tool_server: 'http' })
  t.equal(requestOf(core!), receipt!.request_id, 'the same request')
  t.not(core!.id, pendingId, 'its own content-addressed id')
})

t.test('verify: every listed receipt verifies; a tampered one fails with its step and exit 1', async t => {
  const listed = await gate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--limit', '200'])
  const file = join(dir, 'receipts.jsonl')
  writeFileSync(file, listed.stdout)
  const trusted = await gate(['receipt', 'verify', file, '--trusted-key', signer.publicKey, '--trusted-key', foreign.publicKey])
  t.equal(trusted.code, 0, trusted.stderr)
  const out = trusted.stdout.trim().split('\n')
  t.equal(out.length, rows.length)
  t.ok(out.every(line => /^ok [0-9a-f]{64} \((core|http) receipt, signer trusted\)$/.test(line)), 'one ok line per receipt')
  t.ok(out.some(line => line.includes('http receipt')), 'HTTP receipts verify too')
  const untrusted = await gate(['receipt', 'verify', file])
  t.equal(untrusted.code, 1, 'no --trusted-key: valid signatures by unchecked signers are not a pass')
  t.ok(untrusted.stdout.trim().split('\n').every(line => line.startsWith('UNTRUSTED ') && line.endsWith('signature valid, signer untrusted)')))
  const accepted = await gate(['receipt', 'verify', file, '--allow-untrusted'])
  t.equal(accepted.code, 0)
  t.ok(accepted.stdout.trim().split('\n').every(line => line.startsWith('ok ') && line.endsWith('signature valid, signer untrusted)')))
  const wrongKey = await gate(['receipt', 'verify', file, '--trusted-key', createSigner({ secret: generateSecret() }).publicKey])
  t.equal(wrongKey.code, 1)
  t.match(wrongKey.stdout, /FAIL [0-9a-f]{64} signer: kernel_key is not a trusted signer/)
  const tamperedLines = listed.stdout.split('\n')
  tamperedLines[2] = tamperedLines[2]!.replace('"allow"', '"deny"').replace('"evidence":[', '"evidence":[{"guard_name":"X","verdict":false},')
  const piped = await gate(['receipt', 'verify', '-', '--trusted-key', signer.publicKey, '--trusted-key', foreign.publicKey], { input: tamperedLines.join('\n') })
  t.equal(piped.code, 1)
  const failed = piped.stdout.split('\n').filter(line => line.startsWith('FAIL'))
  t.equal(failed.length, 1)
  t.match(failed[0], /FAIL [0-9a-f]{64} (receipt_id|signature):/)
  // spec 02 order: a core receipt whose id was swapped for another's fails at the id step
  const cores = lines(listed.stdout).filter(x => 'decision' in x)
  const swapped = { ...cores[0]!, id: cores[1]!.id }
  const swap = await gate(['receipt', 'verify', '-', '--trusted-key', signer.publicKey], { input: JSON.stringify(swapped) })
  t.equal(swap.code, 1)
  t.match(swap.stdout, `FAIL ${cores[1]!.id} receipt_id: id is not the hash of the receipt body`)
  const remote = await call(`${trust.url}/v1/receipts/query?limit=5`, { headers: { authorization: `Bearer ${SERVICE_TOKEN}` } })
  const response = await gate(['receipt', 'verify', '-', '--trusted-key', signer.publicKey], { input: remote.text })
  t.equal(response.code, 0, 'a query response verifies as a whole')
  t.equal(response.stdout.trim().split('\n').length, 5)
  const array = await gate(['receipt', 'verify', '-'], { input: JSON.stringify((remote.body as { receipts: unknown[] }).receipts) })
  t.equal(array.stdout.trim().split('\n').length, 5, 'a JSON array too')
  const garbage = await gate(['receipt', 'verify', '-'], { input: '{"id":"x"}\nnot json\n' })
  t.equal(garbage.code, 1)
  t.match(garbage.stdout, /FAIL line-2 parse/)
  t.equal((await gate(['receipt', 'verify'])).code, 2)
  t.equal((await gate(['receipt', 'verify', join(dir, 'nope.jsonl')])).code, 1)
})

t.test('explain prints one receipt in words, from the file or from trust-control', async t => {
  const deny = rows.find(r => r.outcome === 'deny')!
  for (const source of [['--receipt-db', db], ['--control-url', trust.url]]) {
    const r = await gate(['receipt', 'explain', deny.receiptId, ...source], { env: { GATE_CONTROL_TOKEN: SERVICE_TOKEN } })
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, `receipt ${deny.receiptId}`)
    t.match(r.stdout, /verdict: +deny by CapabilityGuard: capability required.*\(HTTP 403\), reason code capability_required/)
    t.match(r.stdout, /route: +POST \/pets \(request /)
    t.match(r.stdout, /caller: +identity hash [0-9a-f]{64}/)
    t.match(r.stdout, /capability: +none presented/)
    t.match(r.stdout, /- CapabilityGuard: failed/)
    t.match(r.stdout, /status: +403 \(the status the decision maps to\)/)
    t.match(r.stdout, /time: +\d{4}-\d\d-\d\dT/)
    t.match(r.stdout, /core form: +stored/)
    t.match(r.stdout, /linkage: +no final receipt names this decision/)
  }
  const decision = await gate(['receipt', 'explain', decisionId, '--receipt-db', db])
  t.match(decision.stdout, `linkage:     final receipt ${finalId}`)
  const unconverted = await gate(['receipt', 'explain', pendingId, '--receipt-db', db])
  t.match(unconverted.stdout, /core form: +not stored yet/)
  t.match(unconverted.stdout, /verdict: +cancel: upstream timed out/)
  const final = await gate(['receipt', 'explain', finalId, '--control-url', trust.url], { env: { GATE_CONTROL_TOKEN: SERVICE_TOKEN } })
  t.match(final.stdout, /kind: +final receipt/)
  t.match(final.stdout, `finalizes decision receipt ${decisionId}`)
  t.match(final.stdout, /status: +201 \(the status answered to the client\)/)
  const hidden = await gate(['receipt', 'explain', pendingId, '--control-url', trust.url], { env: { GATE_CONTROL_TOKEN: ACME_TOKEN } })
  t.equal(hidden.code, 1, "another tenant's receipt is not found with a tenant token")
  t.match(hidden.stderr, /not found/)
  t.equal((await gate(['receipt', 'explain', 'xyz', '--receipt-db', db])).code, 2)
  t.equal((await gate(['receipt', 'explain', 'a'.repeat(64), '--receipt-db', db])).code, 1)
})

t.test('gate --help lists trust and receipt', async t => {
  const r = await runGate(['--help'])
  t.match(r.stdout, /trust/)
  t.match(r.stdout, /receipt/)
  const trustHelp = await runGate(['trust', '--help'])
  t.match(trustHelp.stdout, /serve/)
})
