// The rollup answers exactly what aggregating every receipt answers, for any window, while receipts
// keep arriving (out of timestamp order too). The corpus is an in-memory port implementing the same
// grouping contract as the SQLite store.
import t from 'tap'
import { AnalyticsRollup, type AnalyticsRows } from './analytics-rollup.js'
import type { CorpusAggregateRow, CorpusFilter, CorpusGrouping, ReceiptCorpusPort } from './ports.js'

interface Row {
  seq: number
  timestamp: number
  outcome: 'allow' | 'deny' | 'cancelled' | 'incomplete'
  toolName: string
  subjectKey: string | null
  capabilityId: string | null
  cost: number | null
  attempted: number | null
}

function memoryCorpus(rows: Row[]): ReceiptCorpusPort & { calls: CorpusFilter[] } {
  const calls: CorpusFilter[] = []
  const aggregate = async (f: CorpusFilter, grouping: CorpusGrouping, bucketSeconds = 86400, perBucket = false): Promise<CorpusAggregateRow[]> => {
    calls.push(f)
    const groups = new Map<string, CorpusAggregateRow>()
    for (const r of rows) {
      if (f.afterSeq !== undefined && r.seq <= f.afterSeq) continue
      if (f.throughSeq !== undefined && r.seq > f.throughSeq) continue
      if (f.since !== undefined && r.timestamp < f.since) continue
      if (f.until !== undefined && r.timestamp > f.until) continue
      const bucket = r.timestamp - (r.timestamp % bucketSeconds)
      const key: Partial<CorpusAggregateRow> =
        grouping === 'time'
          ? { bucketStart: bucket }
          : grouping === 'tool'
            ? { toolServer: 'http', toolName: r.toolName }
            : grouping === 'subject'
              ? { subjectKey: r.subjectKey, capabilityId: r.subjectKey === null ? r.capabilityId : null }
              : {}
      if (perBucket && grouping !== 'time') key.bucketStart = bucket
      const k = JSON.stringify(key)
      const g = groups.get(k) ?? { ...key, total: 0, allow: 0, deny: 0, cancelled: 0, incomplete: 0, charged: 0, attempted: 0 }
      g.total++
      g[r.outcome]++
      g.charged += r.cost ?? 0
      g.attempted += r.attempted ?? 0
      groups.set(k, g)
    }
    return [...groups.values()]
  }
  return {
    calls,
    latestSeq: async () => rows.length,
    aggregate,
    queryPage: async () => [],
    countMatching: async () => 0,
    getById: async () => undefined,
    findFinals: async () => [],
    listChain: async () => [],
    setCoreJson: async () => undefined,
  }
}

let seed = 7
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

const T0 = 1_700_006_400 // a day boundary
function makeRow(seq: number): Row {
  const outcome = (['allow', 'allow', 'deny', 'cancelled', 'incomplete'] as const)[Math.floor(random() * 5)]!
  const costed = random() < 0.3
  const subject = random() < 0.8 ? `agent-${Math.floor(random() * 6)}` : null
  return {
    seq,
    // mostly in order, some late arrivals with old timestamps
    timestamp: random() < 0.9 ? T0 + seq * 97 + Math.floor(random() * 50) : T0 + Math.floor(random() * seq * 97),
    outcome,
    toolName: `GET /t${Math.floor(random() * 5)}`,
    subjectKey: subject,
    capabilityId: random() < 0.7 ? `cap-${Math.floor(random() * 9)}` : null,
    cost: costed ? Math.floor(random() * 1000) : null,
    attempted: costed ? Math.floor(random() * 50) : null,
  }
}

function normalize(rows: AnalyticsRows) {
  const strip = (r: CorpusAggregateRow) => JSON.stringify([r.bucketStart ?? null, r.toolServer ?? null, r.toolName ?? null, r.subjectKey ?? null, r.capabilityId ?? null, r.total, r.allow, r.deny, r.cancelled, r.incomplete, r.charged, r.attempted])
  return {
    time: rows.timeRows.map(r => JSON.stringify([r.bucketStart, r.total, r.allow, r.deny, r.cancelled, r.incomplete, r.charged, r.attempted])).sort(),
    tool: rows.toolRows.map(r => strip({ ...r, bucketStart: undefined })).sort(),
    subject: rows.subjectRows.map(r => strip({ ...r, bucketStart: undefined })).sort(),
  }
}

t.test('rollup rows equal aggregating every receipt, for any window and bucket size, as receipts arrive', async t => {
  const rows: Row[] = []
  for (let i = 1; i <= 4000; i++) rows.push(makeRow(i))
  const corpus = memoryCorpus(rows)
  const rollup = new AnalyticsRollup(corpus)
  await rollup.warm()
  t.equal(rollup.through, 4000)
  const span = 4000 * 97
  for (let round = 0; round < 6; round++) {
    const snapshot = rows.length
    const windows: [number | undefined, number | undefined][] = [
      [undefined, undefined],
      [T0 + 86400, T0 + 3 * 86400 - 1],
      [T0 + Math.floor(random() * span), undefined],
      [undefined, T0 + Math.floor(random() * span)],
      [T0 + 5000, T0 + 5000 + 1800],
      [T0 + Math.floor(random() * span / 2), T0 + span / 2 + Math.floor(random() * span / 2)],
    ]
    for (const [since, until] of windows) {
      for (const bucket of [3600, 86400]) {
        const got = await rollup.rows(since, until, snapshot, bucket)
        const f: CorpusFilter = { since, until, throughSeq: snapshot }
        const expected = { timeRows: await corpus.aggregate(f, 'time', bucket), toolRows: await corpus.aggregate(f, 'tool'), subjectRows: await corpus.aggregate(f, 'subject') }
        t.same(normalize(got!), normalize(expected), `round ${round} [${since}, ${until}] bucket ${bucket}`)
      }
    }
    for (let i = 0; i < 700; i++) rows.push(makeRow(rows.length + 1))
  }
  // the refresh reads only what arrived since: every delta query is bounded below by the last seq seen
  t.ok(corpus.calls.filter(c => c.afterSeq !== undefined).every(c => c.afterSeq! > 0 || c.throughSeq === 4000), 'incremental after the first fold')
})

t.test('rollup switches itself off past maxEntries and says so', async t => {
  const rows = Array.from({ length: 500 }, (_, i) => makeRow(i + 1))
  const lines: string[] = []
  const rollup = new AnalyticsRollup(memoryCorpus(rows), { maxEntries: 10, log: line => lines.push(line) })
  t.equal(await rollup.rows(undefined, undefined, 500, 3600), undefined)
  t.equal(rollup.enabled, false)
  t.match(lines[0], /switched off/)
})

t.test('covers only filters without receipt-level members', async t => {
  t.ok(AnalyticsRollup.covers({}))
  t.ok(AnalyticsRollup.covers({ since: 1, until: 2, throughSeq: 9 }))
  t.notOk(AnalyticsRollup.covers({ capabilityId: 'c' }))
  t.notOk(AnalyticsRollup.covers({ subject: { subjectKey: 'k', capabilityIds: [] } }))
  t.notOk(AnalyticsRollup.covers({ toolName: 'x' }))
})
