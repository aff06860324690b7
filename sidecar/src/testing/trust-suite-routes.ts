// The trust-control suite's other routes (trust-serve-suite.ts): analytics, the operator report, tool and
// child receipts, explain, the authority, the CLI, ingest and central budgets.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  canonicalJson,
  checkHttpReceipt,
  createSigner,
  generateSecret,
  sha256Hex,
  signHttpReceiptJson,
  uuidv7,
  verifyCoreReceipt,
  type HttpReceipt,
  type Signer,
} from '@gate/sdk'
import { runGate, spawnGate } from './spawn-gate.js'
import { call, sendRawRequest, type JsonResponse } from './http-client.js'
import type { StoredReceipt } from '@gate/trust'
import { openAuthorityStore, openReceiptStore } from '../stores/index.js'
import { openPgStores } from '@gate/trust/postgres'
import type { TrustSuite, QueryBody, Predicate, SuiteStore } from './trust-suite-fixture.js'

export function registerTrustRouteTests(s: TrustSuite): void {
  const { pg, CONTROL_TOKEN, SERVICE_TOKEN, TENANT_TOKENS, DAY, dir, db, seedFile, signer, agents, now, seedRow, loadModel, rowIdOf, auth, get, pageAll, lineageSubject, ingestBody, toolReceipt } = s

  t.test('analytics: metrics per spec, float metrics omitted when their denominator is zero', async t => {
    s.model = await loadModel()
    const r = await get('/v1/receipts/analytics?timeBucket=day&groupLimit=200')
    t.equal(r.status, 200)
    const body = r.body as { summary: Record<string, number>; byAgent: { subjectKey: string; metrics: Record<string, number> }[]; byTool: { toolServer: string; toolName: string; metrics: Record<string, number> }[]; byTime: { bucketStart: number; bucketEnd: number; metrics: Record<string, number> }[] }
    const count = (p: Predicate) => s.model.filter(p).length
    t.match(body.summary, {
      totalReceipts: s.model.length,
      allowCount: count(r => r.outcome === 'allow'),
      denyCount: count(r => r.outcome === 'deny'),
      cancelledCount: count(r => r.outcome === 'cancelled'),
      incompleteCount: count(r => r.outcome === 'incomplete'),
      totalCostCharged: s.model.reduce((n, r) => n + (r.costUnits ?? 0), 0),
      totalAttemptedCost: s.model.reduce((n, r) => n + (r.attemptedCostUnits ?? 0), 0),
    })
    const allow = count(r => r.outcome === 'allow')
    t.equal(body.summary.reliabilityScore, allow / (allow + count(r => r.outcome === 'cancelled') + count(r => r.outcome === 'incomplete')))
    t.equal(body.summary.complianceRate, (s.model.length - count(r => r.outcome === 'deny')) / s.model.length)
    const byTool = body.byTool.find(row => row.toolName === 'GET /admin/export')!
    t.equal(byTool.metrics.totalReceipts, count(r => r.toolName === 'GET /admin/export'))
    t.notOk('reliabilityScore' in byTool.metrics, 'a tool that only ever denied has no reliability score')
    t.notOk('budgetUtilizationRate' in byTool.metrics, 'a tool without costs has no budget utilization rate')
    t.ok('complianceRate' in byTool.metrics)
    for (const agent of agents) {
      const row = body.byAgent.find(a => a.subjectKey === agent)!
      t.equal(row.metrics.totalReceipts, count(r => lineageSubject(r) === agent), `byAgent ${agent.slice(0, 8)} through the lineage`)
    }
    t.equal(body.byTime.reduce((n, b) => n + b.metrics.totalReceipts!, 0), s.model.length, 'time buckets add up')
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
    const first = await call(`${s.trust.url}/v1/receipts/tools`, { body: tool, headers: auth(SERVICE_TOKEN) })
    t.match(first.body, { receiptId: tool.id, stored: true })
    const again = await call(`${s.trust.url}/v1/receipts/tools`, { body: tool, headers: auth(SERVICE_TOKEN) })
    t.match(again.body, { receiptId: tool.id, stored: false }, 'appending the same receipt again is idempotent')
    const tampered = await call(`${s.trust.url}/v1/receipts/tools`, { body: { ...tool, tool_name: 'write_file' }, headers: auth(SERVICE_TOKEN) })
    t.equal(tampered.status, 400)
    t.match((tampered.body as { error: string }).error, /tool receipt rejected: receipt_id/)
    const huge = await call(`${s.trust.url}/v1/receipts/tools`, { rawBody: '{"x":"' + 'y'.repeat(1024 * 1024) + '"}', headers: { ...auth(SERVICE_TOKEN), 'content-type': 'application/json' } })
    t.equal(huge.status, 400, 'a body over the limit is refused')
    const point = await get(`/v1/receipts/tools?receiptId=${tool.id}`)
    t.match(point.body, { configured: true, backend: pg ? 'postgres' : 'sqlite', kind: 'tool', count: 1, filters: { receiptId: tool.id } })
    t.ok(point.text.includes(JSON.stringify(tool)), 'served exactly as appended')
    const child = { session_id: 'sess-1', parent_request_id: 'req-parent', request_id: 'req-child', operation_kind: 'tool_call', terminal_state: 'completed', outcome_hash: sha256Hex('o'), policy_hash: sha256Hex('p') }
    const appended = await call(`${s.trust.url}/v1/receipts/children`, { body: child, headers: auth(SERVICE_TOKEN) })
    t.equal(appended.status, 200)
    const childId = (appended.body as { receiptId: string }).receiptId
    t.equal(childId, sha256Hex(canonicalJson(child)), 'content-addressed id')
    const listed = await get('/v1/receipts/children?sessionId=sess-1')
    t.match(listed.body, { configured: true, kind: 'child', count: 1, receipts: [child] })
    t.match((await get(`/v1/receipts/children?receiptId=${childId}`)).body, { count: 1 })
    const bad = await call(`${s.trust.url}/v1/receipts/children`, { body: { ...child, id: 'f'.repeat(64) }, headers: auth(SERVICE_TOKEN) })
    t.equal(bad.status, 400)
    // receipts without a canonical form (RFC 8785) are the sender's error, not a 500: a lone surrogate
    // is refused by the JSON reader itself (I-JSON), nesting beyond canonicalization's depth by the check
    const noCanonicalForm: [string, string, RegExp][] = [
      ['tools', JSON.stringify({ ...tool, tool_name: 'write\ud800' }), /not I-JSON \(RFC 7493\): the string at \/tool_name holds a lone surrogate/],
      ['children', JSON.stringify(child).replace('"req-child"', '"req-\\udfff"'), /not I-JSON \(RFC 7493\): the string at \/request_id holds a lone surrogate/],
      ['children', JSON.stringify({ ...child, metadata: JSON.parse('{"a":'.repeat(300) + '1' + '}'.repeat(300)) }), /receipt rejected: /],
    ]
    for (const [route, rawBody, message] of noCanonicalForm) {
      const r = await call(`${s.trust.url}/v1/receipts/${route}`, { rawBody, headers: { ...auth(SERVICE_TOKEN), 'content-type': 'application/json' } })
      t.equal(r.status, 400, `${route}: ${rawBody.slice(0, 60)}…`)
      t.match((r.body as { error: string }).error, message)
    }
  })

  t.test('explain support: a receipt loads by id with its decision/final linkage', async t => {
    const row = s.model.find(r => r.tenant === 'acme' && r.routePattern === '/pets')!
    const r = await get(`/v1/receipts/${row.receiptId}`)
    t.match(r.body, { seq: row.seq, kind: 'decision', decisionReceiptId: null, finalReceiptIds: [], httpReceipt: { id: row.receiptId } })
    t.equal(rowIdOf((r.body as { receipt: Record<string, unknown> }).receipt), row.receiptId, 'the receipt, in its core form (its own id)')
    t.equal((await get(`/v1/receipts/${'0'.repeat(64)}`)).status, 404)
  })

  t.test('authority: status needs the service token; a seed-file authority refuses rotation', async t => {
    const status = await get('/v1/authority')
    t.match(status.body, { publicKey: signer.publicKey, generation: 1, trustedKeyCount: 1 })
    const rotate = await call(`${s.trust.url}/v1/authority`, { method: 'POST', headers: auth(SERVICE_TOKEN) })
    t.equal(rotate.status, 409)
    t.match((rotate.body as { error: string }).error, /pinned by --authority-seed-file/)
  })

  t.test('authority rotation (--authority-db): new key, generation + 1, old receipts and tokens still verify', async t => {
    const rdir = t.testdir({ token: SERVICE_TOKEN })
    const rdb = join(rdir, 'receipts.db')
    const rurl = pg ? await s.pgServer!.createDatabase('gate_rotation') : ''
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
    const q = await get('/v1/receipts/query?limit=3', CONTROL_TOKEN, s.sidecar.url)
    t.equal(q.status, 200)
    t.equal((q.body as QueryBody).receipts.length, 3)
    t.equal((await get('/v1/receipts/query', SERVICE_TOKEN, s.sidecar.url)).status, 401)
    const a = await get('/v1/receipts/analytics', CONTROL_TOKEN, s.sidecar.url)
    t.equal(a.status, 200)
    const authority = await get('/v1/authority', CONTROL_TOKEN, s.sidecar.url)
    t.match(authority.body, { publicKey: signer.publicKey })
    const rotate = await call(`${s.sidecar.url}/v1/authority`, { method: 'POST', headers: auth(CONTROL_TOKEN) })
    t.equal(rotate.status, 409)
    const health = await get('/health', undefined, s.sidecar.url)
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
    const method = await call(`${s.trust.url}/v1/receipts/query`, { method: 'DELETE', headers: auth(SERVICE_TOKEN) })
    t.equal(method.status, 405)
    t.equal(method.headers.allow, 'GET')
    t.same(Object.keys(method.body as object), ['error'])
  })

  t.test('receipt ingest: enrolled signers only, verified before storing, idempotent by receipt id', async t => {
    const sidecarSigner = createSigner({ secret: generateSecret('ed25519') })
    const stranger = createSigner({ secret: generateSecret('ed25519') })
    const ingest = (body: unknown, token = SERVICE_TOKEN) => call(`${s.trust.url}/v1/receipts/ingest`, { body, headers: auth(token) })
    // the tenant, subject and cost are signed into each receipt, and sent beside it as older sidecars do
    const signedColumns = (n: number) => ({ tenant: 'acme', subjectKey: agents[0]!, ...(n % 2 === 0 ? { costUnits: 10 * n, costCurrency: 'EUR' } : {}) })
    const item = (n: number, sign: Signer) => ({ receipt: JSON.parse(signHttpReceiptJson(ingestBody(n, signedColumns(n)), sign).json), ...signedColumns(n) })
    const before = await s.store.query.latestSeq()

    const unknown = await ingest({ receipts: [item(1, stranger)] })
    t.equal(unknown.status, 400, 'a signer never enrolled is refused')
    t.match((unknown.body as { error: string }).error, /receipts\[0\] rejected: its signer [0-9a-f]{64} is not an enrolled key/)

    const enrol = await call(`${s.trust.url}/v1/keys/enroll`, { body: { publicKey: sidecarSigner.publicKey, label: 'sidecar-eu-1' }, headers: auth(SERVICE_TOKEN) })
    t.match(enrol.body, { publicKey: sidecarSigner.publicKey, label: 'sidecar-eu-1', created: true, enrolledAt: Number })
    const again = await call(`${s.trust.url}/v1/keys/enroll`, { body: { publicKey: sidecarSigner.publicKey, label: 'renamed' }, headers: auth(SERVICE_TOKEN) })
    t.match(again.body, { label: 'sidecar-eu-1', created: false }, 'enrolling again keeps the first label')
    t.equal((await call(`${s.trust.url}/v1/keys/enroll`, { body: { publicKey: sidecarSigner.publicKey, label: 'x' }, headers: auth(TENANT_TOKENS.acme!) })).status, 403)
    t.equal((await call(`${s.trust.url}/v1/keys/enroll`, { body: { publicKey: 'nope', label: 'x' }, headers: auth(SERVICE_TOKEN) })).status, 400)
    t.match((await get('/v1/keys')).body, { keys: [{ publicKey: sidecarSigner.publicKey, label: 'sidecar-eu-1' }] })

    const batch = Array.from({ length: 40 }, (_, n) => item(n, sidecarSigner))
    const tampered = { ...batch[7]!, receipt: { ...batch[7]!.receipt, route_pattern: '/pets/{id}/sold' } }
    const refused = await ingest({ receipts: [...batch.slice(0, 7), tampered, ...batch.slice(8)] })
    t.equal(refused.status, 400, 'one receipt whose signature does not verify refuses the batch')
    t.match((refused.body as { error: string }).error, /receipts\[7\] rejected: (receipt_id|signature)/)
    t.equal(await s.store.query.latestSeq(), before, 'nothing of a refused batch was stored')

    const stored = await ingest({ receipts: batch })
    t.equal(stored.status, 200)
    const result = stored.body as { received: number; stored: number; duplicates: number; results: { receiptId: string; seq: number; stored: boolean }[] }
    t.match(result, { received: 40, stored: 40, duplicates: 0 })
    t.same(result.results.map(r => r.seq), Array.from({ length: 40 }, (_, i) => before + 1 + i), 'stored in order, consecutive seqs')
    const replay = await ingest({ receipts: [batch[3], batch[3], item(99, sidecarSigner)] })
    t.match(replay.body, { received: 3, stored: 1, duplicates: 2 }, 'a receipt posted again is stored once')
    t.equal((replay.body as typeof result).results[0]!.seq, result.results[3]!.seq)
    t.equal(await s.store.query.latestSeq(), before + 41)
    const row = await s.store.query.getById(result.results[2]!.receiptId)
    t.match(row, { tenant: 'acme', subjectKey: agents[0], costUnits: 20, costCurrency: 'EUR' })
    t.equal(row?.httpJson, signHttpReceiptJson(ingestBody(2, signedColumns(2)), sidecarSigner).json, 'stored as signed, byte for byte')
    // a column sent beside a receipt is not what gets stored: the row's columns are read off the signature
    const forged = { ...item(98, sidecarSigner), tenant: 'globex', subjectKey: agents[1], costUnits: 999_999, costCurrency: 'USD' }
    const taken = await ingest({ receipts: [forged] })
    t.equal(taken.status, 200)
    const forgedRow = await s.store.query.getById(forged.receipt.id as string)
    t.match(forgedRow, { tenant: 'acme', subjectKey: agents[0], costUnits: 980, costCurrency: 'EUR' }, 'the columns the receipt signs, not the ones sent beside it')
    const served = await get(`/v1/receipts/${result.results[2]!.receiptId}`)
    t.match(served.body, { httpReceipt: { kernel_key: sidecarSigner.publicKey } })
    const acme = await pageAll({ agentSubject: agents[0]!, since: String(now + 1000) }, TENANT_TOKENS.acme!)
    t.equal(acme.ids.length, 42, 'ingested receipts are queryable, by tenant and agent')

    const limits: [unknown, RegExp][] = [
      [{ receipts: [] }, /body is not a gate\.fleet\.ingest_request\.v1: \/receipts: must NOT have fewer than 1 items/],
      [{ receipts: Array.from({ length: 1001 }, () => batch[0]) }, /\/receipts: must NOT have more than 1000 items/],
      [{ receipts: [{ ...batch[0], surprise: 1 }] }, /\/receipts\/0: must not have member "surprise"/],
      [{ receipts: [{ ...batch[0], costCurrency: 'eur' }] }, /\/receipts\/0\/costCurrency: must match pattern/],
      [{ receipts: [{ receipt: 'x' }] }, /\/receipts\/0\/receipt: must be object/],
    ]
    for (const [body, message] of limits) {
      const r = await ingest(body)
      t.equal(r.status, 400, String(message))
      t.match((r.body as { error: string }).error, message)
    }
    // the server answers before the whole body arrived and closes: sent raw, which reads that answer
    const huge = await sendRawRequest(`${s.trust.url}/v1/receipts/ingest`, ['POST /v1/receipts/ingest HTTP/1.1', `authorization: Bearer ${SERVICE_TOKEN}`, 'content-type: application/json'], '{"receipts":["' + 'y'.repeat(9 * 1024 * 1024) + '"]}')
    t.equal(huge.status, 400, 'a body over the 8 MiB limit is refused')
    t.equal((await ingest({ receipts: batch }, TENANT_TOKENS.acme!)).status, 403, 'ingest needs the service token')
    t.equal(await s.store.query.latestSeq(), before + 42, 'nothing else was stored')
  })

  t.test('receipt ingest: a tool call\'s core-only receipt, with its request id beside it', async t => {
    const edgeSigner = createSigner({ secret: generateSecret('ed25519') })
    const ingest = (body: unknown) => call(`${s.trust.url}/v1/receipts/ingest`, { body, headers: auth(SERVICE_TOKEN) })
    const before = await s.store.query.latestSeq()
    const core = toolReceipt(edgeSigner, { tenant_id: 'acme', subjectKey: agents[0] })
    const item = { coreReceipt: core, requestId: 'mcp-call-1', tenant: 'acme', subjectKey: agents[0] }
    t.match((await ingest({ receipts: [item] })).body, { error: /receipts\[0\] rejected: its signer [0-9a-f]{64} is not an enrolled key/ }, 'its signer must be enrolled too')
    t.equal((await call(`${s.trust.url}/v1/keys/enroll`, { body: { publicKey: edgeSigner.publicKey, label: 'mcp-edge-1' }, headers: auth(SERVICE_TOKEN) })).status, 200)

    const http = { receipt: JSON.parse(signHttpReceiptJson(ingestBody(900, { tenant: 'acme' }), edgeSigner).json) as HttpReceipt, tenant: 'acme' }
    const stored = await ingest({ receipts: [http, item] })
    t.equal(stored.status, 200, 'HTTP and core receipts in one batch')
    t.match(stored.body, { received: 2, stored: 2, results: [{ receiptId: http.receipt.id, seq: before + 1 }, { receiptId: core.id, seq: before + 2 }] })
    const row = await s.store.query.getById(core.id)
    t.match(row, { seq: before + 2, httpJson: null, requestId: 'mcp-call-1', method: 'tools/call', toolServer: 'files', toolName: 'read_file', outcome: 'allow', tenant: 'acme', subjectKey: agents[0] })
    t.equal(row?.coreJson, canonicalJson(core), 'stored as signed, byte for byte')
    const served = await get(`/v1/receipts/${core.id}`)
    t.match(served.body, { seq: before + 2, receipt: { id: core.id, signature: core.signature as string }, httpReceipt: null })
    t.match(verifyCoreReceipt((served.body as { receipt: unknown }).receipt, { trustedKeys: [edgeSigner.publicKey] }), { failedStep: null }, 'served as signed: it verifies')
    const byTool = await get(`/v1/receipts/query?toolServer=files&toolName=read_file&since=${now}&until=${now}&limit=200`)
    t.ok((byTool.body as { receipts: { id: string }[] }).receipts.some(r => r.id === core.id), 'queryable by tool server and name')
    t.match((await ingest({ receipts: [item] })).body, { received: 1, stored: 0, duplicates: 1, results: [{ seq: before + 2, stored: false }] }, 'idempotent by receipt id')

    const wrongSignature = { ...core, signature: toolReceipt(edgeSigner, { tenant_id: 'acme' }).signature }
    const refused: [unknown, RegExp][] = [
      [{ ...item, coreReceipt: { ...core, tool_name: 'write_file' } }, /receipts\[0\] rejected: receipt_id: /],
      [{ ...item, coreReceipt: wrongSignature }, /receipts\[0\] rejected: signature: /],
      [{ ...item, coreReceipt: { ...core, decision: { verdict: 'maybe' } } }, /\/receipts\/0\/coreReceipt\/decision: unknown verdict/],
      [{ ...item, coreReceipt: { ...core, timestamp: 'yesterday' } }, /\/receipts\/0\/coreReceipt\/timestamp: must be integer/],
      [{ ...item, coreReceipt: [core] }, /\/receipts\/0\/coreReceipt: must be object/],
      [{ coreReceipt: core, tenant: 'acme' }, /\/receipts\/0: must have required property 'requestId'/],
      [{ ...item, requestId: '' }, /\/receipts\/0\/requestId: must NOT have fewer than 1 characters/],
      [{ ...item, receipt: http.receipt }, /\/receipts\/0: must not have member "receipt"/],
      [{ ...http, requestId: 'x' }, /\/receipts\/0: must not have member "requestId"/],
      [{ ...http, receipt: { ...http.receipt, verdict: 'allow' } }, /\/receipts\/0\/receipt\/verdict: must be object/],
    ]
    for (const [bad, message] of refused) {
      const r = await ingest({ receipts: [bad, { ...http, receipt: JSON.parse(signHttpReceiptJson(ingestBody(901), edgeSigner).json) }] })
      t.equal(r.status, 400, String(message))
      t.match((r.body as { error: string }).error, message)
    }
    t.equal(await s.store.query.latestSeq(), before + 2, 'nothing of a refused batch was stored')
  })

  t.test('central budget captures: concurrent requests never pass the maximum', async t => {
    const capture = (plan: unknown) => call(`${s.trust.url}/v1/budgets/capture`, { body: plan, headers: auth(SERVICE_TOKEN) })
    const plan = { invocations: [{ owner: `cap_${uuidv7()}`, key: '0:POST /pets', max: 12, fixedMax: false, kind: 'grant' }] }
    const results = await Promise.all(Array.from({ length: 30 }, () => capture(plan)))
    t.ok(results.every(r => r.status === 200))
    const allowed = results.map(r => r.body as { allowed: boolean; used?: number[] }).filter(b => b.allowed)
    t.equal(allowed.length, 12)
    t.same(allowed.map(b => b.used![0]).sort((a, b) => a! - b!), Array.from({ length: 12 }, (_, i) => i + 1))
    t.match(results.find(r => !(r.body as { allowed: boolean }).allowed)!.body, { allowed: false, failed: { kind: 'invocation', index: 0, used: 12 } })
    const bad: [unknown, RegExp][] = [
      [{ invocations: [{ owner: '', key: 'k', max: 1, fixedMax: false, kind: 'grant' }] }, /\/invocations\/0\/owner: must NOT have fewer than 1 characters/],
      [{ invocations: [{ owner: 'o', key: 'k', max: -1, fixedMax: false, kind: 'grant' }] }, /\/invocations\/0\/max: must be >= 0/],
      [{ invocations: [], costs: [{ owner: 'o', key: 'k', units: 1, currency: 'usd', maxUnits: 5 }] }, /\/costs\/0\/currency: must match pattern/],
      [{ invocations: [], cost: { owner: 'o', key: 'k', units: 1, currency: 'USD', maxUnits: 5 } }, /\(root\): must not have member "cost"/],
      [{ invocations: [{ owner: 'o', key: 'k', max: 1, fixedMax: false, kind: 'grant' }, { owner: 'o', key: 'k', max: 2, fixedMax: false, kind: 'grant' }] }, /names a counter twice/],
      [{ invocations: [{ owner: 'o', key: 'k', max: 1, fixedMax: false, kind: 'grant', link: 4 }] }, /\/invocations\/0\/link: must be <= 3/],
      [{ invocations: [] }, /at least one counter or a cost/],
      [{ invocations: [], extra: true }, /\(root\): must not have member "extra"/],
    ]
    for (const [body, message] of bad) {
      const r = await capture(body)
      t.equal(r.status, 400)
      t.match((r.body as { error: string }).error, message)
    }
    t.equal((await call(`${s.trust.url}/v1/budgets/capture`, { body: plan, headers: auth(TENANT_TOKENS.acme!) })).status, 403)
  })
}
