// The trust-control suite, run against each backend (trust-serve.test.ts: SQLite, trust-serve-postgres
// .test.ts: PostgreSQL): the real `gate trust serve` process over a receipt store seeded by a real
// `gate sidecar` (thousands of evaluations through /gate/evaluate across tenants, tools, capabilities and
// outcomes) plus receipts written through the store API with timestamps spread over ten days and signed
// by the same authority. On PostgreSQL the sidecar's receipts, issued capabilities and budget counters
// are copied into a fresh database first (the sidecar itself writes SQLite). Expected answers come from a
// model built from the store trust-control reads.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  canonicalJson,
  coreReceiptBody,
  coreReceiptId,
  checkHttpReceipt,
  createSigner,
  generateSecret,
  hexToBytes,
  sha256Hex,
  signHttpReceiptJson,
  toCoreReceiptWithKeypair,
  utf8,
  uuidv7,
  verifyCoreReceipt,
  type CallerIdentity,
  type HttpReceipt,
  type HttpReceiptBody,
  type Signer,
} from '@gate/sdk'
import { readFileSync } from 'node:fs'
import { PETS_SPEC_YAML } from './pets-spec.js'
import { runGate, spawnGate, type GateProcess } from './spawn-gate.js'
import { call, sendRawRequest, type JsonResponse } from './http-client.js'
import {
  createReceiptRow,
  deriveStorePaths,
  openAuthorityStore,
  openBudgetStore,
  openReceiptStore,
  type ReceiptOutcome,
  type ReceiptStore,
  type StoredReceipt,
  type TrustReceiptStore,
} from '../stores/index.js'
import { openPgStores, type PgStores } from '../stores/postgres/index.js'
import { startPostgres, type PostgresServer } from './postgres-server.js'
import { receiptBody } from './receipt-rows.js'

/** Which store `gate trust serve` runs on. */
export type TrustSuiteBackend = 'sqlite' | 'postgres'

/** The store the suite seeds and models: the receipt store trust-control reads. */
type SuiteStore = Pick<TrustReceiptStore, 'log' | 'query'>

/** Registers every trust-control test against `backend` (call once, at a test file's top level). */
export function runTrustServeSuite(backend: TrustSuiteBackend): void {
const pg = backend === 'postgres'

const CONTROL_TOKEN = 'sidecar-control-token-0123456789'
const SERVICE_TOKEN = 'trust-service-token-0123456789abcdef'
const TENANT_TOKENS: Record<string, string> = { acme: 'acme-read-token-0123456789abcdef', globex: 'globex-read-token-0123456789abcd' }
const TENANTS = ['acme', 'globex', 'initech', null] as const
const EVALUATIONS = 10_000
const SEEDED = 7000
const DAY = 86400

// ---------------------------------------------------------------- fixture

const dir = t.testdir({
  'pets.yaml': PETS_SPEC_YAML,
  'service-token': SERVICE_TOKEN + '\n',
  'acme-token': TENANT_TOKENS.acme + '\n',
  'globex-token': TENANT_TOKENS.globex + '\n',
})
const db = join(dir, 'receipts.db')
const seedFile = join(dir, 'seed')
const seed = generateSecret('ed25519')
writeFileSync(seedFile, Buffer.from(seed).toString('hex') + '\n', { mode: 0o600 })
const signer = createSigner({ secret: seed })
const agents = Array.from({ length: 4 }, () => createSigner({ secret: generateSecret() }).publicKey)
const now = Math.floor(Date.now() / 1000)

// Set up in t.before (tap ends a root test whose top level is still awaiting).
let sidecar!: GateProcess
let trust!: GateProcess
let store!: SuiteStore
// PostgreSQL: the server, the database trust-control uses, and its stores as the suite opens them
let pgServer: PostgresServer | undefined
let databaseUrl = ''
let revoked!: IssuedCapability
let model: StoredReceipt[] = []
const caps: IssuedCapability[] = []

t.before(async () => {
if (pg) {
  pgServer = await startPostgres()
  t.teardown(() => pgServer?.destroy())
  databaseUrl = await pgServer.createDatabase('gate_trust_suite')
}
sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', join(dir, 'pets.yaml'), '--receipt-store', db, '--authority-seed-file', seedFile], {
  env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
})
t.teardown(() => sidecar.stop('SIGKILL'))
await issueAll()
await pool(Array.from({ length: EVALUATIONS }, (_, i) => i), 16, n => evaluateOne(sidecar, n))
const sidecarStore = await openReceiptStore(db)
t.teardown(() => sidecarStore.close())
store = pg ? await copyToPostgres(sidecarStore) : sidecarStore
const seededRows = Array.from({ length: SEEDED }, (_, n) => seedRow(n, signer, now - Math.floor(random() * 10 * DAY)))
for (let i = 0; i < seededRows.length; i += 500) await store.log.appendMany(seededRows.slice(i, i + 500))
await startTrust()
model = await loadModel()
})

interface IssuedCapability {
  id: string
  subject: string
  header: string
}

async function issueCapability(gate: GateProcess, token: string, subject: string, grants: unknown[]): Promise<IssuedCapability> {
  const r = await call(`${gate.url}/v1/capabilities/issue`, { body: { subjectPublicKey: subject, scope: { grants }, ttlSeconds: 7200 }, headers: { authorization: `Bearer ${token}` } })
  if (r.status !== 200) throw new Error(`issue failed: ${r.status} ${r.text}`)
  const capability = (r.body as { capability: { id: string } }).capability
  return { id: capability.id, subject, header: Buffer.from(JSON.stringify(capability)).toString('base64url') }
}

async function issueAll(): Promise<void> {
for (const [i, agent] of agents.entries()) {
  caps.push(await issueCapability(sidecar, CONTROL_TOKEN, agent, [{ server_id: 'http', tool_name: 'POST /pets' }, { server_id: 'http', tool_name: 'DELETE /pets/{id}' }, { server_id: 'http', tool_name: 'POST /pets/{id}/adopt' }]))
  // a budgeted capability per agent: its grant runs out, later uses are denied by BudgetGuard
  caps.push(await issueCapability(sidecar, CONTROL_TOKEN, agent, [{ server_id: 'http', tool_name: 'PATCH /pets/{id}', max_invocations: 20 + i }]))
}
revoked = caps[0]!
}

function caller(n: number, tenant: string | null): CallerIdentity {
  return { subject: `user-${n % 37}`, auth_method: { method: 'bearer', token_hash: sha256Hex(`token-${n % 37}`) }, tenant }
}

/** One real evaluation; kind n decides route, capability and therefore outcome. */
async function evaluateOne(gate: GateProcess, n: number): Promise<void> {
  const tenant = TENANTS[n % TENANTS.length]!
  const plain = caps.filter((_, i) => i % 2 === 0)
  const fullCap = plain[(n >> 3) % plain.length]!
  const budgeted = caps.filter((_, i) => i % 2 === 1)[(n >> 3) % 4]!
  const kinds: [string, string, IssuedCapability | undefined][] = [
    ['GET', '/pets', undefined],
    ['GET', `/pets/${n}`, undefined],
    ['POST', '/pets', undefined],
    ['POST', '/pets', fullCap],
    ['DELETE', `/pets/${n}`, fullCap],
    ['GET', '/admin/export', undefined],
    ['PATCH', `/pets/${n}`, budgeted],
    ['POST', `/pets/${n}/adopt`, fullCap],
  ]
  const [method, path, capability] = kinds[n % kinds.length]!
  const r = await call(`${gate.url}/gate/evaluate`, {
    body: { request_id: uuidv7(), method, path, route_pattern: path, caller: caller(n, tenant), timestamp: now },
    headers: capability === undefined ? {} : { 'x-gate-capability': capability.header },
  })
  if (r.status !== 200) throw new Error(`evaluate ${method} ${path}: ${r.status} ${r.text}`)
}

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!)
    }),
  )
}

// Store-API receipts signed by the same authority: timestamps over ten days (not in seq order), every
// outcome, costs in two currencies, some rows attributed to an agent only through the capability lineage.
const SEEDED_ROUTES = ['GET /orders', 'POST /orders', 'GET /orders/{id}', 'DELETE /orders/{id}', 'POST /refunds', 'GET /reports/{kind}']
const OUTCOME_VERDICTS: Record<ReceiptOutcome, HttpReceipt['verdict']> = {
  allow: { verdict: 'allow' },
  deny: { verdict: 'deny', reason: 'no grant covers the route', guard: 'CapabilityGuard', http_status: 403 },
  cancelled: { verdict: 'cancel', reason: 'evaluation timed out' },
  incomplete: { verdict: 'incomplete', reason: 'execution nonce required' },
}
let rng = 0x2545f491
function random(): number {
  rng ^= rng << 13
  rng ^= rng >>> 17
  rng ^= rng << 5
  return (rng >>> 0) / 0x1_0000_0000
}

function seedRow(n: number, sign: Signer, timestamp: number) {
  const outcome = (['allow', 'allow', 'allow', 'deny', 'deny', 'cancelled', 'incomplete'] as const)[n % 7]!
  const [method, route] = SEEDED_ROUTES[n % SEEDED_ROUTES.length]!.split(' ') as [string, string]
  const tenant = TENANTS[Math.floor(random() * TENANTS.length)]!
  const cap = random() < 0.6 ? caps[Math.floor(random() * caps.length)]! : undefined
  const { receipt, json } = signHttpReceiptJson(
    {
      request_id: uuidv7(),
      route_pattern: route,
      method: method as 'GET',
      caller_identity_hash: sha256Hex(`caller-${n % 50}`),
      verdict: OUTCOME_VERDICTS[outcome],
      receipt_kind: 'mediated_decision',
      boundary_class: 'prevent',
      tool_origin: 'caller_executed',
      redaction_mode: 'none',
      evidence: [{ guard_name: 'CapabilityGuard', verdict: outcome === 'allow' }],
      response_status: outcome === 'allow' ? 200 : outcome === 'deny' ? 403 : outcome === 'cancelled' ? 500 : 428,
      timestamp,
      content_hash: sha256Hex(`content-${n}`),
      policy_hash: sha256Hex('policy'),
      trust_level: 'mediated',
      capability_id: cap?.id ?? null,
      metadata: { gate_http_status_scope: 'decision' },
    },
    sign,
  )
  const costed = random() < 0.4
  return createReceiptRow(receipt, json, {
    tenant,
    // a third of the rows that used a capability carry no subject key: the lineage join attributes them
    subjectKey: cap === undefined || n % 3 === 0 ? null : cap.subject,
    costUnits: costed ? Math.floor(random() * 5000) : null,
    costCurrency: costed ? (n % 2 === 0 ? 'USD' : 'EUR') : null,
    attemptedCostUnits: costed && outcome !== 'allow' ? Math.floor(random() * 300) : null,
    // a quarter arrive with their core form already computed
    coreJson: n % 4 === 0 ? canonicalJson(toCoreReceiptWithKeypair(receipt, sign)) : null,
  })
}

async function startTrust(): Promise<void> {
trust = await spawnGate(
  [
    'trust',
    'serve',
    '--listen',
    '127.0.0.1:0',
    ...(pg ? ['--database-url', databaseUrl] : ['--receipt-db', db]),
    '--authority-seed-file',
    seedFile,
    '--service-token-file',
    join(dir, 'service-token'),
    '--tenant-token',
    `acme=${join(dir, 'acme-token')}`,
    '--tenant-token',
    `globex=${join(dir, 'globex-token')}`,
  ],
  { env: { GATE_CONTROL_TOKEN: '' } },
)
t.teardown(() => trust.stop('SIGKILL'))
// A revocation through trust-control: its receipt names the capability but no subject key.
const revocation = await call(`${trust.url}/v1/revocations`, { body: { capabilityId: revoked.id }, headers: auth(SERVICE_TOKEN) })
if (revocation.status !== 200) throw new Error(`revocation failed: ${revocation.text}`)
}

// ---------------------------------------------------------------- model

async function loadModel(): Promise<StoredReceipt[]> {
  const rows: StoredReceipt[] = []
  for await (const row of store.query.iterate(0, 2000)) {
    rows.push(row)
    rememberServedIds(row)
  }
  return rows
}

// A core receipt's id is its own content address (spec 03), not its row's HTTP receipt id: the ids a
// query serves, mapped to their rows'.
const rowIds = new Map<string, string>()

function rememberServedIds(row: StoredReceipt): void {
  if (rowIds.has(row.receiptId)) return
  rowIds.set(row.receiptId, row.receiptId)
  rowIds.set(coreReceiptId(coreReceiptBody(JSON.parse(row.httpJson!) as HttpReceipt)), row.receiptId)
}

function rowIdOf(receipt: Record<string, unknown>): string {
  return rowIds.get(receipt.id as string) ?? (receipt.id as string)
}

function auth(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` }
}

function get(path: string, token: string | undefined = SERVICE_TOKEN, base = trust.url): Promise<JsonResponse> {
  return call(`${base}${path}`, { headers: token === undefined ? {} : auth(token) })
}

interface QueryBody {
  totalCount: number
  nextCursor: number | null
  receipts: Record<string, unknown>[]
}

/** Pages through a query with `limit` until nextCursor is null. */
async function pageAll(params: Record<string, string>, token = SERVICE_TOKEN, path = '/v1/receipts/query', limit = 200) {
  const ids: string[] = []
  const receipts: Record<string, unknown>[] = []
  const totals: number[] = []
  let cursor: number | null = null
  let pages = 0
  do {
    const q = new URLSearchParams({ ...params, limit: String(limit) })
    if (cursor !== null) q.set('cursor', String(cursor))
    const r = await get(`${path}?${q}`, token)
    if (r.status !== 200) throw new Error(`${path}?${q}: ${r.status} ${r.text}`)
    const body = r.body as QueryBody
    totals.push(body.totalCount)
    for (const receipt of body.receipts) {
      ids.push(rowIdOf(receipt))
      receipts.push(receipt)
    }
    if (body.nextCursor !== null) t.equal(body.receipts.length, limit, 'nextCursor only on a full page')
    cursor = body.nextCursor
    pages++
  } while (cursor !== null)
  return { ids, receipts, totals, pages }
}

type Predicate = (r: StoredReceipt) => boolean

function lineageSubject(r: StoredReceipt): string | null {
  if (r.subjectKey !== null) return r.subjectKey
  return caps.find(c => c.id === r.capabilityId)?.subject ?? null
}

function expectIds(predicate: Predicate, rows = model): string[] {
  return rows.filter(predicate).map(r => r.receiptId)
}

const tenantOf = (): Map<string, string | null> => new Map(model.map(r => [r.receiptId, r.tenant]))

// ---------------------------------------------------------------- tests

t.test('the store holds the real evaluations and the seeded receipts', async t => {
  const revocation = model.find(r => r.routePattern === '/v1/revocations')
  t.ok(revocation !== undefined && revocation.capabilityId === revoked.id, 'the revocation through trust-control signed a receipt')
  t.ok(model.length >= EVALUATIONS + SEEDED + 1, `${model.length} receipts`)
  const outcomes = new Set(model.map(r => r.outcome))
  t.same([...outcomes].sort(), ['allow', 'cancelled', 'deny', 'incomplete'])
  const viaEvaluate = model.filter(r => r.routePattern.startsWith('/pets') || r.routePattern === '/admin/export')
  t.ok(viaEvaluate.length >= EVALUATIONS, `${viaEvaluate.length} receipts came through /gate/evaluate`)
  t.ok(model.some(r => r.outcome === 'deny' && r.httpJson!.includes('BudgetGuard')), 'budget denials happened')
  t.ok(new Set(model.map(r => r.tenant)).size === 4, 'four tenant values (three tenants and none)')
})

t.test('GET /health answers without auth with the non-cluster fields', async t => {
  const r = await get('/health', undefined)
  t.equal(r.status, 200)
  const body = r.body as Record<string, any>
  t.equal(body.clustered, pg)
  if (pg) t.match(body.cluster, { peerCount: 0, healthyPeers: 0, hasQuorum: true, quorumSize: 1, reachableNodes: 1, role: 'leader', leaderUrl: trust.url, selfUrl: trust.url, lastErrorCount: 0 })
  else t.notOk('cluster' in body, 'a single SQLite node has no cluster block')
  t.match(body.authority, { publicKey: signer.publicKey, generation: 1, trustedPublicKeys: [signer.publicKey], trustedKeyCount: 1 })
  t.type(body.authority.rotatedAt, 'number')
  t.match(body.stores, { healthy: true, backends: { receipts: 'durable', revocations: 'durable', budgets: 'durable', authority: 'durable', capabilities: 'durable' } })
  t.same(body.federation, { enabled: false, providerCount: 0 })
  t.notOk('version' in body, 'no build identifier on /health')
  t.match(r.headers['content-security-policy'], /default-src 'none'/)
})

t.test('every filter alone returns exactly the matching receipts, totalCount independent of paging', async t => {
  const someCap = caps[3]!
  const cases: [string, Record<string, string>, Predicate][] = [
    ['capabilityId', { capabilityId: someCap.id }, r => r.capabilityId === someCap.id],
    ['toolServer http', { toolServer: 'http' }, r => r.toolServer === 'http'],
    ['toolServer other', { toolServer: 'mcp-files' }, () => false],
    ['toolName', { toolName: 'POST /orders' }, r => r.toolName === 'POST /orders'],
    ['toolName from evaluate', { toolName: 'PATCH /pets/{id}' }, r => r.toolName === 'PATCH /pets/{id}'],
    ['outcome allow', { outcome: 'allow' }, r => r.outcome === 'allow'],
    ['outcome deny', { outcome: 'deny' }, r => r.outcome === 'deny'],
    ['outcome cancelled', { outcome: 'cancelled' }, r => r.outcome === 'cancelled'],
    ['outcome incomplete', { outcome: 'incomplete' }, r => r.outcome === 'incomplete'],
    ['since', { since: String(now - 3 * DAY) }, r => r.timestamp >= now - 3 * DAY],
    ['until', { until: String(now - 7 * DAY) }, r => r.timestamp <= now - 7 * DAY],
    ['minCost', { minCost: '2500', costCurrency: 'USD' }, r => r.costCurrency === 'USD' && r.costUnits !== null && r.costUnits >= 2500],
    ['maxCost', { maxCost: '100', costCurrency: 'EUR' }, r => r.costCurrency === 'EUR' && r.costUnits !== null && r.costUnits <= 100],
    ['costCurrency alone', { costCurrency: 'EUR' }, r => r.costCurrency === 'EUR' && r.costUnits !== null],
    ['agentSubject', { agentSubject: agents[1]! }, r => lineageSubject(r) === agents[1]],
    ['agentSubject with lineage-only rows', { agentSubject: revoked.subject }, r => lineageSubject(r) === revoked.subject],
  ]
  for (const [name, params, predicate] of cases) {
    const expected = expectIds(predicate)
    const got = await pageAll(params)
    t.same(got.ids, expected, `${name}: ${expected.length} receipts, in seq order`)
    t.ok(got.totals.every(n => n === expected.length), `${name}: totalCount ${expected.length} on every page`)
  }
  t.ok(model.some(r => r.subjectKey === null && r.capabilityId === revoked.id && r.routePattern === '/v1/revocations'), 'the revocation receipt joins through the lineage')
})

t.test('filters combine with AND, bounds inclusive', async t => {
  const day = now - 5 * DAY
  const edge = model.find(r => r.timestamp < now - DAY)!.timestamp
  const cases: [string, Record<string, string>, Predicate][] = [
    ['outcome + since + until', { outcome: 'deny', since: String(day), until: String(day + 2 * DAY) }, r => r.outcome === 'deny' && r.timestamp >= day && r.timestamp <= day + 2 * DAY],
    ['inclusive bounds at one second', { since: String(edge), until: String(edge) }, r => r.timestamp === edge],
    ['capability + outcome', { capabilityId: caps[2]!.id, outcome: 'allow' }, r => r.capabilityId === caps[2]!.id && r.outcome === 'allow'],
    ['tool + window', { toolName: 'GET /orders', since: String(now - 2 * DAY) }, r => r.toolName === 'GET /orders' && r.timestamp >= now - 2 * DAY],
    ['cost range + outcome', { minCost: '1000', maxCost: '3000', costCurrency: 'USD', outcome: 'deny' }, r => r.costCurrency === 'USD' && r.costUnits !== null && r.costUnits >= 1000 && r.costUnits <= 3000 && r.outcome === 'deny'],
    ['agent + outcome + tool', { agentSubject: agents[2]!, outcome: 'allow', toolServer: 'http' }, r => lineageSubject(r) === agents[2] && r.outcome === 'allow'],
    ['everything at once', { capabilityId: caps[5]!.id, toolServer: 'http', toolName: 'POST /refunds', outcome: 'deny', since: String(now - 9 * DAY), until: String(now), minCost: '0', maxCost: '5000', costCurrency: 'EUR', agentSubject: caps[5]!.subject }, r =>
      r.capabilityId === caps[5]!.id && r.toolName === 'POST /refunds' && r.outcome === 'deny' && r.timestamp >= now - 9 * DAY && r.costCurrency === 'EUR' && r.costUnits !== null && lineageSubject(r) === caps[5]!.subject],
    ['empty window', { since: String(now + DAY), until: String(now + 2 * DAY) }, () => false],
    ['since above until', { since: String(now), until: String(now - DAY) }, () => false],
  ]
  for (const [name, params, predicate] of cases) {
    const expected = expectIds(predicate)
    const got = await pageAll(params)
    t.same(got.ids, expected, `${name}: ${expected.length}`)
    t.ok(got.totals.every(n => n === expected.length), `${name}: totalCount`)
  }
})

t.test('u64 parameters are exact: beyond 2^53 nothing is rounded', async t => {
  const beyond = '9007199254740993'
  const none = await get(`/v1/receipts/query?since=${beyond}`)
  t.same(none.body, { totalCount: 0, nextCursor: null, receipts: [] }, 'since beyond every timestamp matches nothing')
  const all = await get(`/v1/receipts/query?until=18446744073709551615&limit=1`)
  t.equal((all.body as QueryBody).totalCount, model.length, 'until = u64 max excludes nothing')
  const cursor = await get(`/v1/receipts/query?cursor=${beyond}`)
  t.match(cursor.body, { totalCount: model.length, nextCursor: null, receipts: [] }, 'a cursor past every seq: empty page, totalCount still counts every match')
  const minCost = await get(`/v1/receipts/query?minCost=${beyond}&costCurrency=USD`)
  t.equal((minCost.body as QueryBody).totalCount, 0)
  const over = await get('/v1/receipts/query?since=18446744073709551616')
  t.equal(over.status, 400, 'above u64 max is refused')
  t.match((over.body as { error: string }).error, /since/)
})

t.test('cursor paging visits every matching receipt exactly once while new receipts keep arriving', async t => {
  const snapshot = model[model.length - 1]!.seq
  const filters: Record<string, string>[] = [{}, { outcome: 'allow' }, { toolName: 'GET /pets' }]
  let writing = true
  let written = 0
  const writer = (async () => {
    let n = 100_000
    while (writing) {
      await evaluateOne(sidecar, n++)
      // (on PostgreSQL the sidecar's receipts stay in its own file: every write goes to the database)
      if (n % 5 === 0 || pg) await store.log.append(seedRow(n, signer, now - Math.floor(random() * 10 * DAY)))
      written++
    }
  })()
  try {
    for (const params of filters) {
      const paged = await pageAll(params, SERVICE_TOKEN, '/v1/receipts/query', 37)
      // receipts appended while paging are known once the model is loaded again
      const seqOf = new Map((await loadModel()).map(r => [r.receiptId, r.seq]))
      const got = { ids: paged.receipts.map(rowIdOf) }
      t.equal(new Set(got.ids).size, got.ids.length, `${JSON.stringify(params)}: no receipt twice`)
      const seqs = got.ids.map(id => seqOf.get(id)!)
      t.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!), 'ascending seq')
      const key = Object.keys(params)[0]
      const predicate: Predicate = key === undefined ? () => true : key === 'outcome' ? r => r.outcome === 'allow' : r => r.toolName === 'GET /pets'
      const expectedOld = expectIds(r => r.seq <= snapshot && predicate(r))
      t.same(
        got.ids.filter(id => seqOf.get(id)! <= snapshot),
        expectedOld,
        `${JSON.stringify(params)}: all ${expectedOld.length} receipts present at the start, each once`,
      )
    }
  } finally {
    writing = false
    await writer
  }
  t.ok(written > 0, `${written} receipts arrived meanwhile`)
  model = await loadModel()
})

t.test('limit is clamped to 1..200 with default 50', async t => {
  const cases: [string, number][] = [['', 50], ['limit=0', 1], ['limit=1', 1], ['limit=200', 200], ['limit=201', 200], ['limit=100000', 200], ['limit=18446744073709551615', 200]]
  for (const [query, size] of cases) {
    const r = await get(`/v1/receipts/query?${query}`)
    t.equal(r.status, 200, query)
    const body = r.body as QueryBody
    t.equal(body.receipts.length, size, `${query || 'no limit'}: ${size} receipts`)
    t.equal(body.nextCursor, model[size - 1]!.seq, 'nextCursor is the last seq of the full page')
  }
  const agent = await get(`/v1/agents/${agents[0]}/receipts?limit=0`)
  t.equal((agent.body as QueryBody).receipts.length, 1, 'the agent route clamps too')
})

t.test('every 400 names the problem in a body with one error string', async t => {
  const cases: [string, RegExp][] = [
    ['/v1/receipts/query?bogus=1&other=2', /unknown query parameters: bogus, other/],
    ['/v1/receipts/query?outcome=allow&outcome=deny', /"outcome" appears more than once/],
    ['/v1/receipts/query?limit=-1', /limit must be an unsigned integer/],
    ['/v1/receipts/query?limit=ten', /limit/],
    ['/v1/receipts/query?since=1.5', /since must be an unsigned integer/],
    ['/v1/receipts/query?until=', /until/],
    ['/v1/receipts/query?cursor=-3', /cursor/],
    ['/v1/receipts/query?outcome=maybe', /outcome must be one of allow, deny, cancelled, incomplete/],
    ['/v1/receipts/query?minCost=5', /costCurrency is required/],
    ['/v1/receipts/query?maxCost=5', /costCurrency is required/],
    ['/v1/receipts/query?minCost=6&maxCost=5&costCurrency=USD', /minCost \(6\) is above maxCost \(5\)/],
    ['/v1/receipts/query?costCurrency=usd', /three uppercase ASCII letters/],
    ['/v1/receipts/query?costCurrency=USDT', /three uppercase ASCII letters/],
    ['/v1/receipts/query?agentSubject=xyz', /agentSubject must be a hex-encoded Ed25519/],
    ['/v1/receipts/query?capabilityId=', /capabilityId must be a non-empty string/],
    [`/v1/agents/${agents[0]}/receipts?outcome=allow`, /unknown query parameter: outcome/],
    ['/v1/agents/not-a-key/receipts', /subject_key must be a hex-encoded/],
    ['/v1/receipts/analytics?timeBucket=week', /timeBucket must be hour or day/],
    ['/v1/receipts/analytics?minCost=1', /unknown query parameter: minCost/],
    ['/v1/receipts/analytics?cursor=1', /unknown query parameter: cursor/],
    ['/v1/reports/operator?budgetLimit=x', /budgetLimit/],
    ['/v1/reports/operator?limit=5', /unknown query parameter: limit/],
    ['/v1/receipts/tools?cursor=5', /unknown query parameter: cursor/],
    ['/v1/receipts/abc', /receipt_id must be 64 lowercase hex/],
  ]
  for (const [path, message] of cases) {
    const r = await get(path)
    t.equal(r.status, 400, path)
    t.same(Object.keys(r.body as object), ['error'], `${path}: a single error member`)
    t.match((r.body as { error: string }).error, message, path)
  }
})

const PROTECTED: [string, string, unknown?][] = [
  ['GET', '/v1/receipts/query'],
  ['GET', `/v1/agents/${'a'.repeat(64)}/receipts`],
  ['GET', '/v1/receipts/analytics'],
  ['GET', '/v1/reports/operator'],
  ['GET', '/v1/receipts/tools'],
  ['POST', '/v1/receipts/tools', {}],
  ['GET', '/v1/receipts/children'],
  ['POST', '/v1/receipts/children', {}],
  ['GET', '/v1/authority'],
  ['POST', '/v1/authority', {}],
  ['POST', '/v1/capabilities/issue', {}],
  ['POST', '/v1/revocations', {}],
  ['GET', `/v1/receipts/${'b'.repeat(64)}`],
]

t.test('absent and unknown tokens get the identical 401 on every route', async t => {
  const variants: [string, Record<string, string>][] = [
    ['absent', {}],
    ['unknown', auth('not-a-known-token-at-all-000000')],
    ['another scheme', { authorization: `Basic ${SERVICE_TOKEN}` }],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['sidecar control token', auth(CONTROL_TOKEN)],
  ]
  for (const [method, path, body] of PROTECTED) {
    const texts = new Set<string>()
    for (const [name, headers] of variants) {
      const r = await call(`${trust.url}${path}`, { method, headers, body })
      t.equal(r.status, 401, `${method} ${path} ${name}`)
      t.equal(r.headers['www-authenticate'], 'Bearer')
      texts.add(r.text)
    }
    t.same([...texts], ['{"error":"missing or invalid bearer token"}'], `${method} ${path}: one body for every variant`)
  }
})

t.test('a tenant token on an admin-only surface gets 403 with the spec wording', async t => {
  const surfaces: Record<string, string> = {
    'GET /v1/receipts/analytics': 'receipt analytics',
    'GET /v1/reports/operator': 'operator report',
    'GET /v1/receipts/children': 'child receipt listing',
    'POST /v1/receipts/children': 'child receipt append',
    'POST /v1/receipts/tools': 'tool receipt append',
    'GET /v1/authority': 'authority status',
    'POST /v1/authority': 'authority rotation',
    'POST /v1/capabilities/issue': 'capability issuance',
    'POST /v1/revocations': 'capability revocation',
  }
  for (const [method, path, body] of PROTECTED) {
    const surface = surfaces[`${method} ${path}`]
    if (surface === undefined) continue
    const r = await call(`${trust.url}${path}`, { method, headers: auth(TENANT_TOKENS.acme!), body })
    t.equal(r.status, 403, `${method} ${path}`)
    t.same(r.body, { error: `${surface} requires admin receipt read authority` })
  }
})

t.test('tenant isolation: a tenant token never sees another tenant\'s receipt through any route', async t => {
  model = await loadModel()
  const tenants = tenantOf()
  // tool receipts for two tenants, appended by the admin
  for (const tenant of ['acme', 'globex', null]) {
    const r = await call(`${trust.url}/v1/receipts/tools`, { body: toolReceipt(signer, { tenant_id: tenant }), headers: auth(SERVICE_TOKEN) })
    t.equal(r.status, 200, `tool receipt for ${tenant}`)
  }
  for (const tenant of ['acme', 'globex']) {
    const token = TENANT_TOKENS[tenant]!
    const own = expectIds(r => r.tenant === tenant)
    const all = await pageAll({}, token)
    t.same(all.ids, own, `${tenant}: the unfiltered query is exactly its ${own.length} receipts`)
    const variants: Record<string, string>[] = [{ outcome: 'deny' }, { since: String(now - 4 * DAY) }, { toolName: 'GET /pets' }, { capabilityId: caps[1]!.id }, { costCurrency: 'USD' }, { agentSubject: agents[3]! }]
    for (const params of variants) {
      const got = await pageAll(params, token)
      t.ok(got.ids.every(id => tenants.get(id) === tenant), `${tenant} ${JSON.stringify(params)}: ${got.ids.length} receipts, all its own`)
      t.ok(got.totals.every(n => n === got.ids.length), 'totalCount counts only its own')
    }
    for (const agent of agents) {
      const got = await pageAll({}, token, `/v1/agents/${agent}/receipts`)
      t.same(got.ids, expectIds(r => r.tenant === tenant && lineageSubject(r) === agent), `${tenant}: agent route for ${agent.slice(0, 8)}`)
    }
    const foreign = model.filter(r => r.tenant !== tenant)
    for (const r of foreign.filter((_, i) => i % Math.ceil(foreign.length / 150) === 0)) {
      const point = await get(`/v1/receipts/${r.receiptId}`, token)
      t.equal(point.status, 404, 'another tenant\'s receipt is not found')
    }
    const mine = model.find(r => r.tenant === tenant)!
    t.equal((await get(`/v1/receipts/${mine.receiptId}`, token)).status, 200, 'its own receipt loads by id')
    const tools = await get('/v1/receipts/tools', token)
    const toolReceipts = (tools.body as { receipts: { tenant_id: string | null }[] }).receipts
    t.ok(toolReceipts.length >= 1 && toolReceipts.every(r => r.tenant_id === tenant), `${tenant}: only its tool receipts`)
    for (const path of ['/v1/receipts/analytics', '/v1/reports/operator', '/v1/receipts/children', '/v1/authority']) {
      t.equal((await get(path, token)).status, 403, `${tenant}: ${path} is admin-only`)
    }
    const health = await get('/health', token)
    t.notOk(health.text.includes('"receipts":['), '/health lists no receipts')
  }
})

t.test('every receipt returned verifies offline against the authority keys', async t => {
  const keys = ((await get('/v1/authority')).body as { trustedPublicKeys: string[] }).trustedPublicKeys
  const all = await pageAll({})
  t.equal(all.ids.length, model.length)
  // asked before the verification below, which keeps this process busy for longer than an idle
  // keep-alive connection lives on the server
  const sample = await get('/v1/receipts/query?limit=5')
  let core = 0
  let failures = 0
  for (const receipt of all.receipts) {
    const check = verifyCoreReceipt(receipt, { trustedKeys: keys })
    if (check.ok) core++
    else failures++
  }
  t.equal(failures, 0, 'no receipt fails verification')
  t.equal(core, model.length, `all ${core} are core receipts signed by the authority`)
  // byte for byte: what the store holds is what was served
  const text = sample.text
  const stored = await loadModel()
  for (const r of (sample.body as QueryBody).receipts) {
    const row = stored.find(s => s.receiptId === rowIdOf(r))!
    if (row.coreJson !== null) t.ok(text.includes(row.coreJson), 'served exactly as stored')
  }
})

t.test('analytics: metrics per spec, float metrics omitted when their denominator is zero', async t => {
  model = await loadModel()
  const r = await get('/v1/receipts/analytics?timeBucket=day&groupLimit=200')
  t.equal(r.status, 200)
  const body = r.body as { summary: Record<string, number>; byAgent: { subjectKey: string; metrics: Record<string, number> }[]; byTool: { toolServer: string; toolName: string; metrics: Record<string, number> }[]; byTime: { bucketStart: number; bucketEnd: number; metrics: Record<string, number> }[] }
  const count = (p: Predicate) => model.filter(p).length
  t.match(body.summary, {
    totalReceipts: model.length,
    allowCount: count(r => r.outcome === 'allow'),
    denyCount: count(r => r.outcome === 'deny'),
    cancelledCount: count(r => r.outcome === 'cancelled'),
    incompleteCount: count(r => r.outcome === 'incomplete'),
    totalCostCharged: model.reduce((n, r) => n + (r.costUnits ?? 0), 0),
    totalAttemptedCost: model.reduce((n, r) => n + (r.attemptedCostUnits ?? 0), 0),
  })
  const allow = count(r => r.outcome === 'allow')
  t.equal(body.summary.reliabilityScore, allow / (allow + count(r => r.outcome === 'cancelled') + count(r => r.outcome === 'incomplete')))
  t.equal(body.summary.complianceRate, (model.length - count(r => r.outcome === 'deny')) / model.length)
  const byTool = body.byTool.find(row => row.toolName === 'GET /admin/export')!
  t.equal(byTool.metrics.totalReceipts, count(r => r.toolName === 'GET /admin/export'))
  t.notOk('reliabilityScore' in byTool.metrics, 'a tool that only ever denied has no reliability score')
  t.notOk('budgetUtilizationRate' in byTool.metrics, 'a tool without costs has no budget utilization rate')
  t.ok('complianceRate' in byTool.metrics)
  for (const agent of agents) {
    const row = body.byAgent.find(a => a.subjectKey === agent)!
    t.equal(row.metrics.totalReceipts, count(r => lineageSubject(r) === agent), `byAgent ${agent.slice(0, 8)} through the lineage`)
  }
  t.equal(body.byTime.reduce((n, b) => n + b.metrics.totalReceipts!, 0), model.length, 'time buckets add up')
  t.ok(body.byTime.every(b => b.bucketEnd === b.bucketStart + DAY - 1 && b.bucketStart % DAY === 0))
  const hour = await get(`/v1/receipts/analytics?timeBucket=hour&since=${now - DAY}&groupLimit=3`)
  const hourBody = hour.body as typeof body
  t.ok(hourBody.byTime.length <= 3 && hourBody.byTool.length <= 3 && hourBody.byAgent.length <= 3, 'groupLimit bounds every grouping')
  t.ok(hourBody.byTime.every(b => b.bucketEnd - b.bucketStart === 3599))
  const empty = await get(`/v1/receipts/analytics?since=${now + DAY}`)
  t.same((empty.body as typeof body).summary, { totalReceipts: 0, allowCount: 0, denyCount: 0, cancelledCount: 0, incompleteCount: 0, totalCostCharged: 0, totalAttemptedCost: 0 }, 'no receipts: counts only, no rates')
  const cancelledOnly = await get(`/v1/receipts/analytics?toolName=${encodeURIComponent('GET /pets/{id}')}`)
  t.ok('reliabilityScore' in (cancelledOnly.body as typeof body).summary)
  const agentOnly = await get(`/v1/receipts/analytics?agentSubject=${agents[0]}`)
  t.equal((agentOnly.body as typeof body).summary.totalReceipts, count(r => lineageSubject(r) === agents[0]))
})

t.test('operator report: every key present, sections from the stored data', async t => {
  const r = await get(`/v1/reports/operator?since=${now - 10 * DAY - 10}&budgetLimit=3&attributionLimit=5&authorizationLimit=4&meteredLimit=2`)
  t.equal(r.status, 200)
  const body = r.body as Record<string, any>
  t.same(Object.keys(body).sort(), [
    'activity',
    'authorizationContext',
    'budgetUtilization',
    'compliance',
    'costAttribution',
    'filters',
    'generatedAt',
    'meteredBillingReconciliation',
    'settlementReconciliation',
    'sharedEvidence',
  ])
  t.type(body.generatedAt, 'number')
  t.match(body.filters, { since: now - 10 * DAY - 10, budgetLimit: 3, attributionLimit: 5, timeBucket: 'day', groupLimit: 50 })
  const analytics = await get(`/v1/receipts/analytics?since=${now - 10 * DAY - 10}`)
  t.same(body.activity.summary, (analytics.body as { summary: unknown }).summary, 'activity is the analytics body')
  t.equal(body.budgetUtilization.rows.length, 3, 'budgetLimit bounds the budget rows')
  t.match(body.budgetUtilization.rows[0], { capabilityId: String, grantKey: String, invocationsUsed: Number, maxInvocations: Number })
  t.ok(body.budgetUtilization.rows.every((row: any) => agents.includes(row.subjectKey)), 'budget rows resolve their agent')
  t.equal(body.costAttribution.rows.length, 5)
  t.match(body.compliance, { childReceiptScope: 'omitted_no_join_path', settlementBacklog: { pendingCount: 0 }, evidenceExportQuery: { path: '/v1/receipts/query' } })
  t.ok(['full_query_window', 'time_window_context_only', 'omitted_no_join_path'].includes(body.compliance.childReceiptScope))
  t.match(body.settlementReconciliation, { summary: { receiptCount: 0 }, receipts: [] })
  t.equal(body.meteredBillingReconciliation.receipts.length, 2)
  t.match(body.authorizationContext, { schema: String, profile: String, summary: { capabilityReceipts: Number } })
  t.equal(body.authorizationContext.receipts.length, 4)
  t.match(body.sharedEvidence, { summary: { referenceCount: 0 }, references: [] })
})

t.test('tool and child receipts: append with the service token, list and point-load', async t => {
  const tool = toolReceipt(signer, { tenant_id: 'acme' })
  const first = await call(`${trust.url}/v1/receipts/tools`, { body: tool, headers: auth(SERVICE_TOKEN) })
  t.match(first.body, { receiptId: tool.id, stored: true })
  const again = await call(`${trust.url}/v1/receipts/tools`, { body: tool, headers: auth(SERVICE_TOKEN) })
  t.match(again.body, { receiptId: tool.id, stored: false }, 'appending the same receipt again is idempotent')
  const tampered = await call(`${trust.url}/v1/receipts/tools`, { body: { ...tool, tool_name: 'write_file' }, headers: auth(SERVICE_TOKEN) })
  t.equal(tampered.status, 400)
  t.match((tampered.body as { error: string }).error, /tool receipt rejected: receipt_id/)
  const huge = await call(`${trust.url}/v1/receipts/tools`, { rawBody: '{"x":"' + 'y'.repeat(1024 * 1024) + '"}', headers: { ...auth(SERVICE_TOKEN), 'content-type': 'application/json' } })
  t.equal(huge.status, 400, 'a body over the limit is refused')
  const point = await get(`/v1/receipts/tools?receiptId=${tool.id}`)
  t.match(point.body, { configured: true, backend: pg ? 'postgres' : 'sqlite', kind: 'tool', count: 1, filters: { receiptId: tool.id } })
  t.ok(point.text.includes(JSON.stringify(tool)), 'served exactly as appended')
  const child = { session_id: 'sess-1', parent_request_id: 'req-parent', request_id: 'req-child', operation_kind: 'tool_call', terminal_state: 'completed', outcome_hash: sha256Hex('o'), policy_hash: sha256Hex('p') }
  const appended = await call(`${trust.url}/v1/receipts/children`, { body: child, headers: auth(SERVICE_TOKEN) })
  t.equal(appended.status, 200)
  const childId = (appended.body as { receiptId: string }).receiptId
  t.equal(childId, sha256Hex(canonicalJson(child)), 'content-addressed id')
  const listed = await get('/v1/receipts/children?sessionId=sess-1')
  t.match(listed.body, { configured: true, kind: 'child', count: 1, receipts: [child] })
  t.match((await get(`/v1/receipts/children?receiptId=${childId}`)).body, { count: 1 })
  const bad = await call(`${trust.url}/v1/receipts/children`, { body: { ...child, id: 'f'.repeat(64) }, headers: auth(SERVICE_TOKEN) })
  t.equal(bad.status, 400)
  // receipts without a canonical form (RFC 8785) are the sender's error, not a 500: a lone surrogate
  // is refused by the JSON reader itself (I-JSON), nesting beyond canonicalization's depth by the check
  const noCanonicalForm: [string, string, RegExp][] = [
    ['tools', JSON.stringify({ ...tool, tool_name: 'write\ud800' }), /not I-JSON \(RFC 7493\): the string at \/tool_name holds a lone surrogate/],
    ['children', JSON.stringify(child).replace('"req-child"', '"req-\\udfff"'), /not I-JSON \(RFC 7493\): the string at \/request_id holds a lone surrogate/],
    ['children', JSON.stringify({ ...child, metadata: JSON.parse('{"a":'.repeat(300) + '1' + '}'.repeat(300)) }), /receipt rejected: /],
  ]
  for (const [route, rawBody, message] of noCanonicalForm) {
    const r = await call(`${trust.url}/v1/receipts/${route}`, { rawBody, headers: { ...auth(SERVICE_TOKEN), 'content-type': 'application/json' } })
    t.equal(r.status, 400, `${route}: ${rawBody.slice(0, 60)}…`)
    t.match((r.body as { error: string }).error, message)
  }
})

t.test('explain support: a receipt loads by id with its decision/final linkage', async t => {
  const row = model.find(r => r.tenant === 'acme' && r.routePattern === '/pets')!
  const r = await get(`/v1/receipts/${row.receiptId}`)
  t.match(r.body, { seq: row.seq, kind: 'decision', decisionReceiptId: null, finalReceiptIds: [], httpReceipt: { id: row.receiptId } })
  t.equal(rowIdOf((r.body as { receipt: Record<string, unknown> }).receipt), row.receiptId, 'the receipt, in its core form (its own id)')
  t.equal((await get(`/v1/receipts/${'0'.repeat(64)}`)).status, 404)
})

t.test('authority: status needs the service token; a seed-file authority refuses rotation', async t => {
  const status = await get('/v1/authority')
  t.match(status.body, { publicKey: signer.publicKey, generation: 1, trustedKeyCount: 1 })
  const rotate = await call(`${trust.url}/v1/authority`, { method: 'POST', headers: auth(SERVICE_TOKEN) })
  t.equal(rotate.status, 409)
  t.match((rotate.body as { error: string }).error, /pinned by --authority-seed-file/)
})

t.test('authority rotation (--authority-db): new key, generation + 1, old receipts and tokens still verify', async t => {
  const rdir = t.testdir({ token: SERVICE_TOKEN })
  const rdb = join(rdir, 'receipts.db')
  const rurl = pg ? await pgServer!.createDatabase('gate_rotation') : ''
  const state = pg ? ['--database-url', rurl] : ['--receipt-db', rdb, '--authority-db', join(rdir, 'authority.db')]
  const serve = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', ...state, '--service-token-file', join(rdir, 'token')], { env: { GATE_CONTROL_TOKEN: '' } })
  t.teardown(() => serve.stop('SIGKILL'))
  let oldSigner: Signer
  let rstore: SuiteStore
  if (pg) {
    const rpg = await openPgStores({ url: rurl, derivePublicKey: s => createSigner({ secret: s }).publicKey })
    t.teardown(() => rpg.close())
    oldSigner = createSigner({ secret: rpg.authority.current()!.seed })
    rstore = rpg.receipts
  } else {
    const authorityStore = await openAuthorityStore(join(rdir, 'authority.db'), { derivePublicKey: s => createSigner({ secret: s }).publicKey })
    oldSigner = createSigner({ secret: authorityStore.current()!.seed })
    await authorityStore.close()
    const sqliteStore = await openReceiptStore(rdb)
    t.teardown(() => sqliteStore.close())
    rstore = sqliteStore
  }
  await rstore.log.appendMany(Array.from({ length: 300 }, (_, n) => seedRow(n, oldSigner, now - n)))
  const token = await call(`${serve.url}/v1/capabilities/issue`, { body: { subjectPublicKey: agents[0], scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, ttlSeconds: 600 }, headers: auth(SERVICE_TOKEN) })
  t.equal(token.status, 200)
  const before = (await get('/v1/authority', SERVICE_TOKEN, serve.url)).body as { publicKey: string; generation: number }
  t.match(before, { publicKey: oldSigner.publicKey, generation: 1 })

  const rotated = await call(`${serve.url}/v1/authority`, { method: 'POST', headers: auth(SERVICE_TOKEN) })
  t.equal(rotated.status, 200)
  const after = rotated.body as { publicKey: string; generation: number; trustedPublicKeys: string[]; trustedKeyCount: number; previousPublicKey: string }
  t.equal(after.generation, 2)
  t.not(after.publicKey, oldSigner.publicKey)
  t.same(after.trustedPublicKeys, [oldSigner.publicKey, after.publicKey], 'the old key stays trusted')
  t.equal(after.previousPublicKey, oldSigner.publicKey)
  const rows = await (async () => { const out: StoredReceipt[] = []; for await (const r of rstore.query.iterate()) out.push(r); return out })()
  t.ok(rows.every(r => r.coreJson !== null), 'the rotation stored the core form of every row the retiring key signed')

  // a row signed with the retired key after the rotation can no longer be converted: served as stored
  const straggler = seedRow(9999, oldSigner, now)
  await rstore.log.append(straggler)
  const revokeNew = await call(`${serve.url}/v1/revocations`, { body: { capabilityId: 'cap-after-rotation' }, headers: auth(SERVICE_TOKEN) })
  t.equal(revokeNew.status, 200, 'a receipt signed by the new key')
  const served: Record<string, unknown>[] = []
  let cursor: number | null = 0
  while (cursor !== null) {
    const page: JsonResponse = await get(`/v1/receipts/query?limit=200&cursor=${cursor}`, SERVICE_TOKEN, serve.url)
    const body = page.body as QueryBody
    served.push(...body.receipts)
    cursor = body.nextCursor
  }
  t.equal(served.length, 302)
  const keys = after.trustedPublicKeys
  let coreOk = 0
  let httpOk = 0
  for (const receipt of served) {
    if ('decision' in receipt) {
      if (verifyCoreReceipt(receipt, { trustedKeys: keys }).ok) coreOk++
    } else if (checkHttpReceipt(receipt, { trustedKeys: keys }).failedStep === null) httpOk++
  }
  t.equal(coreOk, 301, 'old-key and new-key core receipts verify against the trusted keys')
  t.equal(httpOk, 1, 'the straggler is served in its signed HTTP form, never dropped or re-signed')
  const revocationReceipt = served.find(r => r.capability_id === 'cap-after-rotation')!
  t.equal(revocationReceipt.kernel_key, after.publicKey)
  const health = await get('/health', undefined, serve.url)
  t.match(health.body, { authority: { generation: 2, trustedKeyCount: 2 } })
})

t.test('the sidecar mounts the same trust routes behind its control token', { skip: pg ? 'the sidecar serves its own SQLite stores (the SQLite suite)' : false }, async t => {
  const q = await get('/v1/receipts/query?limit=3', CONTROL_TOKEN, sidecar.url)
  t.equal(q.status, 200)
  t.equal((q.body as QueryBody).receipts.length, 3)
  t.equal((await get('/v1/receipts/query', SERVICE_TOKEN, sidecar.url)).status, 401)
  const a = await get('/v1/receipts/analytics', CONTROL_TOKEN, sidecar.url)
  t.equal(a.status, 200)
  const authority = await get('/v1/authority', CONTROL_TOKEN, sidecar.url)
  t.match(authority.body, { publicKey: signer.publicKey })
  const rotate = await call(`${sidecar.url}/v1/authority`, { method: 'POST', headers: auth(CONTROL_TOKEN) })
  t.equal(rotate.status, 409)
  const health = await get('/health', undefined, sidecar.url)
  t.match(health.body, { clustered: false, authority: { publicKey: signer.publicKey } })
})

t.test('gate trust serve: --help describes every flag; usage errors exit 2, startup failures exit 1', { skip: pg ? 'the SQLite suite covers the CLI; trust-migrate.test.ts the PostgreSQL flags' : false }, async t => {
  const help = await runGate(['trust', 'serve', '--help'])
  t.equal(help.code, 0)
  for (const flag of ['--listen', '--receipt-db', '--revocation-db', '--budget-db', '--authority-seed-file', '--authority-db', '--service-token-file', '--tenant-token', 'GATE_CONTROL_TOKEN', '9091']) {
    t.match(help.stdout, flag, flag)
  }
  const noEnv = { GATE_CONTROL_TOKEN: '' }
  const cases: [string[], number, RegExp][] = [
    [['trust', 'serve', '--bogus'], 2, /bogus/],
    [['trust', 'serve', '--service-token-file', join(dir, 'service-token')], 2, /--receipt-db PATH .* or --database-url URL .* is required/],
    [['trust', 'serve', '--receipt-db', db], 2, /service token is required/],
    [['trust', 'serve', '--receipt-db', db, '--service-token-file', join(dir, 'service-token'), '--authority-db', 'a.db', '--authority-seed-file', seedFile], 2, /mutually exclusive/],
    [['trust', 'serve', '--receipt-db', db, '--service-token-file', join(dir, 'service-token'), '--tenant-token', 'acme'], 2, /TENANT=FILE/],
    [['trust', 'serve', '--receipt-db', db, '--service-token-file', join(dir, 'service-token'), '--listen', 'nowhere'], 2, /--listen/],
    [['trust', 'serve', '--receipt-db', db, '--service-token-file', join(dir, 'missing-token')], 1, /cannot read --service-token-file/],
    [['trust', 'serve', '--receipt-db', join(dir, 'pets.yaml'), '--service-token-file', join(dir, 'service-token'), '--listen', '127.0.0.1:0'], 1, /receipts store|not a|refusing/i],
  ]
  for (const [args, code, message] of cases) {
    const r = await runGate(args, { env: noEnv })
    t.equal(r.code, code, args.join(' '))
    t.match(r.stderr, message)
    t.notMatch(r.stderr + r.stdout, SERVICE_TOKEN, 'never prints a token')
  }
  const short = join(dir, 'short-token')
  writeFileSync(short, 'short', { mode: 0o600 })
  const weak = await runGate(['trust', 'serve', '--receipt-db', db, '--service-token-file', short, '--listen', '127.0.0.1:0'], { env: noEnv })
  t.equal(weak.code, 1)
  t.match(weak.stderr, /at least 16 characters/)
  t.notMatch(weak.stderr, /short"/)
})

t.test('unknown routes and methods answer in the spec 03 body form', async t => {
  const missing = await get('/v1/nothing-here')
  t.equal(missing.status, 404)
  t.same(Object.keys(missing.body as object), ['error'])
  const method = await call(`${trust.url}/v1/receipts/query`, { method: 'DELETE', headers: auth(SERVICE_TOKEN) })
  t.equal(method.status, 405)
  t.equal(method.headers.allow, 'GET')
  t.same(Object.keys(method.body as object), ['error'])
})

t.test('receipt ingest: enrolled signers only, verified before storing, idempotent by receipt id', async t => {
  const sidecarSigner = createSigner({ secret: generateSecret('ed25519') })
  const stranger = createSigner({ secret: generateSecret('ed25519') })
  const ingest = (body: unknown, token = SERVICE_TOKEN) => call(`${trust.url}/v1/receipts/ingest`, { body, headers: auth(token) })
  const item = (n: number, sign: Signer, extra: Record<string, unknown> = {}) => ({ receipt: JSON.parse(signHttpReceiptJson(ingestBody(n), sign).json), tenant: 'acme', subjectKey: agents[0], ...extra })
  const before = await store.query.latestSeq()

  const unknown = await ingest({ receipts: [item(1, stranger)] })
  t.equal(unknown.status, 400, 'a signer never enrolled is refused')
  t.match((unknown.body as { error: string }).error, /receipts\[0\] rejected: its signer [0-9a-f]{64} is not an enrolled key/)

  const enrol = await call(`${trust.url}/v1/keys/enroll`, { body: { publicKey: sidecarSigner.publicKey, label: 'sidecar-eu-1' }, headers: auth(SERVICE_TOKEN) })
  t.match(enrol.body, { publicKey: sidecarSigner.publicKey, label: 'sidecar-eu-1', created: true, enrolledAt: Number })
  const again = await call(`${trust.url}/v1/keys/enroll`, { body: { publicKey: sidecarSigner.publicKey, label: 'renamed' }, headers: auth(SERVICE_TOKEN) })
  t.match(again.body, { label: 'sidecar-eu-1', created: false }, 'enrolling again keeps the first label')
  t.equal((await call(`${trust.url}/v1/keys/enroll`, { body: { publicKey: sidecarSigner.publicKey, label: 'x' }, headers: auth(TENANT_TOKENS.acme!) })).status, 403)
  t.equal((await call(`${trust.url}/v1/keys/enroll`, { body: { publicKey: 'nope', label: 'x' }, headers: auth(SERVICE_TOKEN) })).status, 400)
  t.match((await get('/v1/keys')).body, { keys: [{ publicKey: sidecarSigner.publicKey, label: 'sidecar-eu-1' }] })

  const batch = Array.from({ length: 40 }, (_, n) => item(n, sidecarSigner, n % 2 === 0 ? { costUnits: 10 * n, costCurrency: 'EUR' } : {}))
  const tampered = { ...batch[7]!, receipt: { ...batch[7]!.receipt, route_pattern: '/pets/{id}/sold' } }
  const refused = await ingest({ receipts: [...batch.slice(0, 7), tampered, ...batch.slice(8)] })
  t.equal(refused.status, 400, 'one receipt whose signature does not verify refuses the batch')
  t.match((refused.body as { error: string }).error, /receipts\[7\] rejected: (receipt_id|signature)/)
  t.equal(await store.query.latestSeq(), before, 'nothing of a refused batch was stored')

  const stored = await ingest({ receipts: batch })
  t.equal(stored.status, 200)
  const result = stored.body as { received: number; stored: number; duplicates: number; results: { receiptId: string; seq: number; stored: boolean }[] }
  t.match(result, { received: 40, stored: 40, duplicates: 0 })
  t.same(result.results.map(r => r.seq), Array.from({ length: 40 }, (_, i) => before + 1 + i), 'stored in order, consecutive seqs')
  const replay = await ingest({ receipts: [batch[3], batch[3], item(99, sidecarSigner)] })
  t.match(replay.body, { received: 3, stored: 1, duplicates: 2 }, 'a receipt posted again is stored once')
  t.equal((replay.body as typeof result).results[0]!.seq, result.results[3]!.seq)
  t.equal(await store.query.latestSeq(), before + 41)
  const row = await store.query.getById(result.results[2]!.receiptId)
  t.match(row, { tenant: 'acme', subjectKey: agents[0], costUnits: 20, costCurrency: 'EUR' })
  t.equal(row?.httpJson, signHttpReceiptJson(ingestBody(2), sidecarSigner).json, 'stored as signed, byte for byte')
  const served = await get(`/v1/receipts/${result.results[2]!.receiptId}`)
  t.match(served.body, { httpReceipt: { kernel_key: sidecarSigner.publicKey } })
  const acme = await pageAll({ agentSubject: agents[0]!, since: String(now + 1000) }, TENANT_TOKENS.acme!)
  t.equal(acme.ids.length, 41, 'ingested receipts are queryable, by tenant and agent')

  const limits: [unknown, RegExp][] = [
    [{ receipts: [] }, /receipts must be an array of 1 to 1000 items/],
    [{ receipts: Array.from({ length: 1001 }, () => batch[0]) }, /receipts must be an array of 1 to 1000/],
    [{ receipts: [{ ...batch[0], surprise: 1 }] }, /unknown member "surprise"/],
    [{ receipts: [{ ...batch[0], costCurrency: 'eur' }] }, /costCurrency must be three uppercase/],
    [{ receipts: [{ receipt: 'x' }] }, /receipt must be a signed HttpReceipt object/],
  ]
  for (const [body, message] of limits) {
    const r = await ingest(body)
    t.equal(r.status, 400, String(message))
    t.match((r.body as { error: string }).error, message)
  }
  // the server answers before the whole body arrived and closes: sent raw, which reads that answer
  const huge = await sendRawRequest(`${trust.url}/v1/receipts/ingest`, ['POST /v1/receipts/ingest HTTP/1.1', `authorization: Bearer ${SERVICE_TOKEN}`, 'content-type: application/json'], '{"receipts":["' + 'y'.repeat(9 * 1024 * 1024) + '"]}')
  t.equal(huge.status, 400, 'a body over the 8 MiB limit is refused')
  t.equal((await ingest({ receipts: batch }, TENANT_TOKENS.acme!)).status, 403, 'ingest needs the service token')
  t.equal(await store.query.latestSeq(), before + 41, 'nothing else was stored')
})

t.test('central budget captures: concurrent requests never pass the maximum', async t => {
  const capture = (plan: unknown) => call(`${trust.url}/v1/budgets/capture`, { body: plan, headers: auth(SERVICE_TOKEN) })
  const plan = { invocations: [{ owner: `cap_${uuidv7()}`, key: '0:POST /pets', max: 12, fixedMax: false, kind: 'grant' }] }
  const results = await Promise.all(Array.from({ length: 30 }, () => capture(plan)))
  t.ok(results.every(r => r.status === 200))
  const allowed = results.map(r => r.body as { allowed: boolean; used?: number[] }).filter(b => b.allowed)
  t.equal(allowed.length, 12)
  t.same(allowed.map(b => b.used![0]).sort((a, b) => a! - b!), Array.from({ length: 12 }, (_, i) => i + 1))
  t.match(results.find(r => !(r.body as { allowed: boolean }).allowed)!.body, { allowed: false, failed: { kind: 'invocation', index: 0, used: 12 } })
  const bad: [unknown, RegExp][] = [
    [{ invocations: [{ owner: '', key: 'k', max: 1, fixedMax: false, kind: 'grant' }] }, /owner must be a non-empty string/],
    [{ invocations: [{ owner: 'o', key: 'k', max: -1, fixedMax: false, kind: 'grant' }] }, /max must be a non-negative integer/],
    [{ invocations: [], cost: { owner: 'o', key: 'k', units: 1, currency: 'usd', maxUnits: 5 } }, /currency must be three uppercase/],
    [{ invocations: [] }, /at least one counter or a cost/],
    [{ invocations: [], extra: true }, /unknown member "extra"/],
  ]
  for (const [body, message] of bad) {
    const r = await capture(body)
    t.equal(r.status, 400)
    t.match((r.body as { error: string }).error, message)
  }
  t.equal((await call(`${trust.url}/v1/budgets/capture`, { body: plan, headers: auth(TENANT_TOKENS.acme!) })).status, 403)
})

/** An HttpReceipt body a sidecar would sign (request n), timestamped after the suite's other receipts. */

// ---------------------------------------------------------------- helpers

/** An HttpReceipt body a sidecar would ship, later than the suite's own receipts. */
function ingestBody(n: number): HttpReceiptBody {
  return receiptBody(n, { request_id: `ingest-${n}`, timestamp: now + 2000 + n })
}

/** A core receipt of a tool call (gate.receipt.v1), signed like Gate signs core receipts. */
function toolReceipt(sign: Signer, extra: { tenant_id: string | null }): Record<string, unknown> & { id: string } {
  const parameters = { path: `/tmp/${uuidv7()}` }
  const body: Record<string, unknown> = {
    timestamp: now,
    capability_id: caps[1]!.id,
    tool_server: 'files',
    tool_name: 'read_file',
    action: { parameters, parameter_hash: sha256Hex(canonicalJson(parameters)) },
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    tool_origin: 'host_executed_provider_reported',
    redaction_mode: 'none',
    decision: { verdict: 'allow' },
    policy_hash: sha256Hex('tools'),
    trust_level: 'mediated',
    tenant_id: extra.tenant_id,
    bbs_projection_version: null,
    kernel_key: sign.publicKey,
  }
  body.content_hash = sha256Hex(canonicalJson(body))
  const id = sha256Hex(canonicalJson(body))
  return { id, ...body, signature: sign.sign(utf8(canonicalJson({ id, body }))) }
}

// ---------------------------------------------------------------- PostgreSQL

// The database trust-control reads, filled with what the sidecar wrote: its receipts (same seqs, same
// bytes), the capabilities it issued (the lineage) and its budget counters (the operator report).
async function copyToPostgres(sqliteStore: ReceiptStore): Promise<SuiteStore> {
  const stores: PgStores = await openPgStores({ url: databaseUrl, derivePublicKey: s => createSigner({ secret: s }).publicKey })
  t.teardown(() => stores.close())
  let batch: StoredReceipt[] = []
  for await (const row of sqliteStore.query.iterate(0, 1000)) {
    batch.push(row)
    if (batch.length === 500) {
      await stores.receipts.log.appendMany(batch)
      batch = []
    }
  }
  if (batch.length > 0) await stores.receipts.log.appendMany(batch)
  for (const cap of caps) await stores.capabilities.remember(JSON.parse(Buffer.from(cap.header, 'base64url').toString('utf8')))
  const budgets = await openBudgetStore(deriveStorePaths(db).budgets)
  try {
    for (const grant of await budgets.listGrants(10_000)) {
      await stores.db.run('INSERT INTO invocation_budgets (capability_id, grant_key, used, max_invocations, updated_at) VALUES ($1, $2, $3, $4, $5)', [
        grant.capabilityId,
        grant.grantKey,
        grant.used,
        grant.maxInvocations,
        grant.updatedAt,
      ])
    }
  } finally {
    await budgets.close()
  }
  return stores.receipts
}
}
