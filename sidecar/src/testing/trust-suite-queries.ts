// The trust-control suite's query tests (trust-serve-suite.ts): the receipt query, its filters, paging,
// tokens and tenant isolation, and offline verification of what it serves.
import t from 'tap'
import { verifyCoreReceipt } from '@gate/sdk'
import { call } from './http-client.js'
import type { TrustSuite, QueryBody, Predicate } from './trust-suite-fixture.js'

export function registerTrustQueryTests(s: TrustSuite): void {
  const { pg, CONTROL_TOKEN, SERVICE_TOKEN, TENANT_TOKENS, EVALUATIONS, SEEDED, DAY, signer, agents, now, caps, tenantOf, evaluateOne, random, seedRow, loadModel, rowIdOf, auth, get, pageAll, lineageSubject, expectIds, toolReceipt } = s

  t.test('the store holds the real evaluations and the seeded receipts', async t => {
    const revocation = s.model.find(r => r.routePattern === '/v1/revocations')
    t.ok(revocation !== undefined && revocation.capabilityId === s.revoked.id, 'the revocation through trust-control signed a receipt')
    t.ok(s.model.length >= EVALUATIONS + SEEDED + 1, `${s.model.length} receipts`)
    const outcomes = new Set(s.model.map(r => r.outcome))
    t.same([...outcomes].sort(), ['allow', 'cancelled', 'deny', 'incomplete'])
    const viaEvaluate = s.model.filter(r => r.routePattern.startsWith('/pets') || r.routePattern === '/admin/export')
    t.ok(viaEvaluate.length >= EVALUATIONS, `${viaEvaluate.length} receipts came through /gate/evaluate`)
    t.ok(s.model.some(r => r.outcome === 'deny' && r.httpJson!.includes('BudgetGuard')), 'budget denials happened')
    t.ok(new Set(s.model.map(r => r.tenant)).size === 4, 'four tenant values (three tenants and none)')
  })

  t.test('GET /health answers without auth with the non-cluster fields', async t => {
    const r = await get('/health', undefined)
    t.equal(r.status, 200)
    const body = r.body as Record<string, any>
    t.equal(body.clustered, pg)
    if (pg) t.match(body.cluster, { peerCount: 0, healthyPeers: 0, hasQuorum: true, quorumSize: 1, reachableNodes: 1, role: 'leader', leaderUrl: s.trust.url, selfUrl: s.trust.url, lastErrorCount: 0 })
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
      ['agentSubject with lineage-only rows', { agentSubject: s.revoked.subject }, r => lineageSubject(r) === s.revoked.subject],
    ]
    for (const [name, params, predicate] of cases) {
      const expected = expectIds(predicate)
      const got = await pageAll(params)
      t.same(got.ids, expected, `${name}: ${expected.length} receipts, in seq order`)
      t.ok(got.totals.every(n => n === expected.length), `${name}: totalCount ${expected.length} on every page`)
    }
    t.ok(s.model.some(r => r.subjectKey === null && r.capabilityId === s.revoked.id && r.routePattern === '/v1/revocations'), 'the revocation receipt joins through the lineage')
  })

  t.test('filters combine with AND, bounds inclusive', async t => {
    const day = now - 5 * DAY
    const edge = s.model.find(r => r.timestamp < now - DAY)!.timestamp
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
    t.equal((all.body as QueryBody).totalCount, s.model.length, 'until = u64 max excludes nothing')
    const cursor = await get(`/v1/receipts/query?cursor=${beyond}`)
    t.match(cursor.body, { totalCount: s.model.length, nextCursor: null, receipts: [] }, 'a cursor past every seq: empty page, totalCount still counts every match')
    const minCost = await get(`/v1/receipts/query?minCost=${beyond}&costCurrency=USD`)
    t.equal((minCost.body as QueryBody).totalCount, 0)
    const over = await get('/v1/receipts/query?since=18446744073709551616')
    t.equal(over.status, 400, 'above u64 max is refused')
    t.match((over.body as { error: string }).error, /since/)
  })

  t.test('cursor paging visits every matching receipt exactly once while new receipts keep arriving', async t => {
    const snapshot = s.model[s.model.length - 1]!.seq
    const filters: Record<string, string>[] = [{}, { outcome: 'allow' }, { toolName: 'GET /pets' }]
    let writing = true
    let written = 0
    const writer = (async () => {
      let n = 100_000
      while (writing) {
        await evaluateOne(s.sidecar, n++)
        // (on PostgreSQL the sidecar's receipts stay in its own file: every write goes to the database)
        if (n % 5 === 0 || pg) await s.store.log.append(seedRow(n, signer, now - Math.floor(random() * 10 * DAY)))
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
    s.model = await loadModel()
  })

  t.test('limit is clamped to 1..200 with default 50', async t => {
    const cases: [string, number][] = [['', 50], ['limit=0', 1], ['limit=1', 1], ['limit=200', 200], ['limit=201', 200], ['limit=100000', 200], ['limit=18446744073709551615', 200]]
    for (const [query, size] of cases) {
      const r = await get(`/v1/receipts/query?${query}`)
      t.equal(r.status, 200, query)
      const body = r.body as QueryBody
      t.equal(body.receipts.length, size, `${query || 'no limit'}: ${size} receipts`)
      t.equal(body.nextCursor, s.model[size - 1]!.seq, 'nextCursor is the last seq of the full page')
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
        const r = await call(`${s.trust.url}${path}`, { method, headers, body })
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
      const r = await call(`${s.trust.url}${path}`, { method, headers: auth(TENANT_TOKENS.acme!), body })
      t.equal(r.status, 403, `${method} ${path}`)
      t.same(r.body, { error: `${surface} requires admin receipt read authority` })
    }
  })

  t.test('tenant isolation: a tenant token never sees another tenant\'s receipt through any route', async t => {
    s.model = await loadModel()
    const tenants = tenantOf()
    // tool receipts for two tenants, appended by the admin
    for (const tenant of ['acme', 'globex', null]) {
      const r = await call(`${s.trust.url}/v1/receipts/tools`, { body: toolReceipt(signer, { tenant_id: tenant }), headers: auth(SERVICE_TOKEN) })
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
      const foreign = s.model.filter(r => r.tenant !== tenant)
      for (const r of foreign.filter((_, i) => i % Math.ceil(foreign.length / 150) === 0)) {
        const point = await get(`/v1/receipts/${r.receiptId}`, token)
        t.equal(point.status, 404, 'another tenant\'s receipt is not found')
      }
      const mine = s.model.find(r => r.tenant === tenant)!
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
    t.equal(all.ids.length, s.model.length)
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
    t.equal(core, s.model.length, `all ${core} are core receipts signed by the authority`)
    // byte for byte: what the store holds is what was served
    const text = sample.text
    const stored = await loadModel()
    for (const r of (sample.body as QueryBody).receipts) {
      const row = stored.find(s => s.receiptId === rowIdOf(r))!
      if (row.coreJson !== null) t.ok(text.includes(row.coreJson), 'served exactly as stored')
    }
  })
}
