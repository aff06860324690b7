// The fixture of the trust-control suite (trust-serve-suite.ts): a real `gate sidecar` seeding a receipt
// store, the store copied to PostgreSQL when that is the backend, the real `gate trust serve` over it, and
// the helpers the suite's sections share. State set up in `t.before` is read through getters.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  canonicalJson,
  coreReceiptBody,
  coreReceiptId,
  createSigner,
  generateSecret,
  sha256Hex,
  signCoreReceipt,
  signHttpReceiptJson,
  toCoreReceiptWithKeypair,
  uuidv7,
  type CallerIdentity,
  type HttpReceipt,
  type HttpReceiptBody,
  type Signer,
} from '@gate/sdk'
import { exampleCoreReceiptDraft } from '@gate/sdk/testing'
import { PETS_SPEC_YAML } from './pets-spec.js'
import { spawnGate, type GateProcess } from './spawn-gate.js'
import { call, type JsonResponse } from './http-client.js'
import { createReceiptRow, type ReceiptOutcome, type StoredReceipt, type TrustReceiptStore } from '@gate/trust'
import { deriveStorePaths, openBudgetStore, openReceiptStore, type ReceiptStore } from '../stores/index.js'
import { openPgStores, type PgStores } from '@gate/trust/postgres'
import { startPostgres, type PostgresServer } from '@gate/trust/testing'
import { receiptBody } from './receipt-rows.js'

/** Which store `gate trust serve` runs on. */
export type TrustSuiteBackend = 'sqlite' | 'postgres'

/** The store the suite seeds and models: the receipt store trust-control reads. */
export type SuiteStore = Pick<TrustReceiptStore, 'log' | 'query'>

export interface IssuedCapability {
  id: string
  subject: string
  header: string
}
export interface QueryBody {
  totalCount: number
  nextCursor: number | null
  receipts: Record<string, unknown>[]
}
export type Predicate = (r: StoredReceipt) => boolean

/** What the suite's sections use: constants, helpers, and the state set up before the tests run. */
export type TrustSuite = ReturnType<typeof trustSuiteFixture>

/** Sets up the suite against `backend` (registers its t.before and teardowns). */
export function trustSuiteFixture(backend: TrustSuiteBackend) {
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


  function lineageSubject(r: StoredReceipt): string | null {
    if (r.subjectKey !== null) return r.subjectKey
    return caps.find(c => c.id === r.capabilityId)?.subject ?? null
  }

  function expectIds(predicate: Predicate, rows = model): string[] {
    return rows.filter(predicate).map(r => r.receiptId)
  }

  const tenantOf = (): Map<string, string | null> => new Map(model.map(r => [r.receiptId, r.tenant]))

  /**
   * An HttpReceipt body a sidecar would ship, later than the suite's own receipts; `signed` are the row
   * columns its writer signs into it (a tenant and agent subject, a charged cost), which ingest reads off it.
   */
  function ingestBody(n: number, signed: { tenant?: string; subjectKey?: string; costUnits?: number; costCurrency?: string } = {}): HttpReceiptBody {
    const metadata: Record<string, unknown> = {}
    if (signed.tenant !== undefined) metadata.gate_tenant = signed.tenant
    if (signed.subjectKey !== undefined) metadata.gate_subject_key = signed.subjectKey
    if (signed.costUnits !== undefined) metadata.financial = { cost_charged: signed.costUnits, currency: signed.costCurrency, attempted_cost: 0 }
    return receiptBody(n, { request_id: `ingest-${n}`, timestamp: now + 2000 + n, ...(Object.keys(metadata).length === 0 ? {} : { metadata }) })
  }

  /** A core receipt of a tool call (gate.receipt.v1), signed like Gate signs core receipts; `lineage`: its receipt DAG members. */
  function toolReceipt(sign: Signer, extra: { tenant_id: string | null; subjectKey?: string; lineage?: Record<string, unknown> }): Record<string, unknown> & { id: string } {
    const parameters = { path: `/tmp/${uuidv7()}` }
    const draft = exampleCoreReceiptDraft(0, {
      timestamp: now,
      capability_id: caps[1]!.id,
      tool_server: 'files',
      action: { parameters, parameter_hash: sha256Hex(canonicalJson(parameters)) },
      policy_hash: sha256Hex('tools'),
      tenant_id: extra.tenant_id,
      ...(extra.subjectKey === undefined ? {} : { metadata: { gate_subject_key: extra.subjectKey } }),
      ...extra.lineage,
    })
    return signCoreReceipt({ ...draft, kernel_key: sign.publicKey }, sign) as unknown as Record<string, unknown> & { id: string }
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
  return {
    pg,
    CONTROL_TOKEN,
    SERVICE_TOKEN,
    TENANT_TOKENS,
    TENANTS,
    EVALUATIONS,
    SEEDED,
    DAY,
    dir,
    db,
    seedFile,
    seed,
    signer,
    agents,
    now,
    caps,
    rowIds,
    tenantOf,
    SEEDED_ROUTES,
    OUTCOME_VERDICTS,
    issueCapability,
    issueAll,
    caller,
    evaluateOne,
    pool,
    random,
    seedRow,
    startTrust,
    loadModel,
    rememberServedIds,
    rowIdOf,
    auth,
    get,
    pageAll,
    lineageSubject,
    expectIds,
    ingestBody,
    toolReceipt,
    copyToPostgres,
    get sidecar() { return sidecar },
    get trust() { return trust },
    get store() { return store },
    get pgServer() { return pgServer },
    get databaseUrl() { return databaseUrl },
    get revoked() { return revoked },
    get model() { return model },
    set model(rows: StoredReceipt[]) { model = rows },
  }
}
