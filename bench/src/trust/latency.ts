// The query measurements of the trust-query bench, the same against either backend's `gate trust serve`:
// selective queries (p50/p99/max of sequential requests), broad queries paged through, analytics and the
// operator report over the corpus of corpus.ts.
import { request } from 'undici'
import type { GateProcess } from '../../../sidecar/dist/testing/spawn-gate.js'
import { quantile } from '../measure.js'
import { agentKey, AGENTS, CAPABILITIES, DAY, DAYS, SERVICE_TOKEN, T0, TENANT_TOKEN } from './corpus.js'

/** The query targets of the issue: selective and agent-route p99, analytics and the operator report. */
export const TARGET_SELECTIVE_P99_MS = 20
export const TARGET_ANALYTICS_MS = 1000

/** Every query measurement's row, and the five the targets are about. */
export interface QueryLatencies {
  results: Record<string, string | number>[]
  selective: Latency
  agent: Latency
  report: Latency
  analyticsDay: Latency
  analyticsAll: Latency
}

/** Runs every query measurement against `client`'s server, which holds `rows` corpus receipts. */
export async function measureQueryLatency(client: Client, rows: number): Promise<QueryLatencies> {
  const results: Record<string, string | number>[] = []
  // warm the page cache and the statement caches the way a running service would be (cap-0 is not
  // among the capabilities the selective queries below read first)
  await client.get(`/v1/receipts/query?capabilityId=cap-0&limit=50`)
  await client.get(`/v1/receipts/analytics?since=${T0}&until=${T0 + DAY - 1}`)

  const selective = await measure(1000, i => client.get(`/v1/receipts/query?capabilityId=cap-${(i * 7919) % CAPABILITIES}&limit=50`))
  results.push(row('selective: capabilityId (~1,000 of 1M), limit 50', selective))
  const selectiveAgent = await measure(300, i => client.get(`/v1/agents/${agentKey((i * 31) % AGENTS)}/receipts?limit=50`))
  results.push(row('selective: agent route (~10,000 of 1M), limit 50', selectiveAgent))
  const selectiveCombined = await measure(300, i => client.get(`/v1/receipts/query?capabilityId=cap-${(i * 13) % CAPABILITIES}&outcome=allow&since=${T0 + (i % DAYS) * DAY}&limit=50`))
  results.push(row('selective: capabilityId + outcome + since', selectiveCombined))

  const broadPages = await pageThrough(client, 'outcome=allow', 60, 200)
  results.push(row('broad: outcome=allow (~900,000), 60 pages of 200', broadPages))
  const tenantPages = await pageThrough(client, '', 60, 200, TENANT_TOKEN)
  results.push(row('broad: tenant token (~50,000), 60 pages of 200', tenantPages))
  const windowPages = await pageThrough(client, `since=${T0 + 10 * DAY}&until=${T0 + 12 * DAY - 1}`, 60, 200)
  results.push(row('broad: two-day window (~66,000), 60 pages of 200', windowPages))

  const analyticsDay = await measure(20, i => client.get(`/v1/receipts/analytics?since=${T0 + (i % DAYS) * DAY}&until=${T0 + (i % DAYS) * DAY + DAY - 1}&timeBucket=hour`))
  results.push(row('analytics: one day (~33,000), hour buckets', analyticsDay))
  const analyticsAll = await measure(5, () => client.get('/v1/receipts/analytics'))
  results.push(row(`analytics: all ${rows.toLocaleString('en-US')} receipts, day buckets`, analyticsAll))
  const report = await measure(5, i => client.get(`/v1/reports/operator?since=${T0 + (i % DAYS) * DAY}&until=${T0 + (i % DAYS) * DAY + DAY - 1}`))
  results.push(row('operator report: one day', report))
  return { results, selective, agent: selectiveAgent, report, analyticsDay, analyticsAll }
}

/** True when the five measurements meet the targets. */
export function metQueryTargets(l: QueryLatencies): boolean {
  return (
    l.selective.p99 <= TARGET_SELECTIVE_P99_MS &&
    l.agent.p99 <= TARGET_SELECTIVE_P99_MS &&
    l.analyticsDay.p99 <= TARGET_ANALYTICS_MS &&
    l.analyticsAll.p99 <= TARGET_ANALYTICS_MS &&
    l.report.p99 <= TARGET_ANALYTICS_MS
  )
}

/** One line on the query targets. */
export function describeQueryTargets(l: QueryLatencies): string {
  const analytics = l.analyticsDay.p99 <= TARGET_ANALYTICS_MS && l.analyticsAll.p99 <= TARGET_ANALYTICS_MS
  return (
    `selective p99 <= ${TARGET_SELECTIVE_P99_MS} ms (${l.selective.p99.toFixed(1)} ms): ${l.selective.p99 <= TARGET_SELECTIVE_P99_MS ? 'met' : 'MISSED'}; ` +
    `agent route p99 <= ${TARGET_SELECTIVE_P99_MS} ms (${l.agent.p99.toFixed(1)} ms): ${l.agent.p99 <= TARGET_SELECTIVE_P99_MS ? 'met' : 'MISSED'}; ` +
    `operator report p99 <= ${TARGET_ANALYTICS_MS} ms (${Math.round(l.report.p99)} ms): ${l.report.p99 <= TARGET_ANALYTICS_MS ? 'met' : 'MISSED'}; ` +
    `analytics <= ${TARGET_ANALYTICS_MS} ms (day p99 ${Math.round(l.analyticsDay.p99)} ms, all p99 ${Math.round(l.analyticsAll.p99)} ms): ${analytics ? 'met' : 'MISSED'}`
  )
}

/** Resolves with the number the first line of `gate`'s output matching `pattern` captures. */
export async function waitForLine(gate: GateProcess, pattern: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(gate.output())
      if (match === null) return false
      gate.child.stdout?.off('data', check)
      resolve(Number(match[1]))
      return true
    }
    if (check()) return
    gate.child.stdout?.on('data', check)
    gate.exited.then(code => reject(new Error(`gate trust serve exited (${code}):\n${gate.output()}`)))
  })
}

// ---- latency ----

export interface Latency {
  n: number
  p50: number
  p99: number
  max: number
}

export function row(name: string, l: Latency): Record<string, string | number> {
  return { measurement: name, requests: l.n, 'p50 ms': l.p50, 'p99 ms': l.p99, 'max ms': l.max }
}

export async function measure(n: number, fn: (i: number) => Promise<unknown>): Promise<Latency> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await fn(i)
    times.push(performance.now() - started)
  }
  return { n, p50: quantile(times, 0.5), p99: quantile(times, 0.99), max: Math.max(...times) }
}

async function pageThrough(client: Client, query: string, pages: number, limit: number, token = SERVICE_TOKEN): Promise<Latency> {
  const times: number[] = []
  let cursor = 0
  for (let i = 0; i < pages; i++) {
    const started = performance.now()
    const body = JSON.parse(await client.get(`/v1/receipts/query?${query}${query === '' ? '' : '&'}limit=${limit}&cursor=${cursor}`, token)) as { nextCursor: number | null }
    times.push(performance.now() - started)
    if (body.nextCursor === null) break
    cursor = body.nextCursor
  }
  return { n: times.length, p50: quantile(times, 0.5), p99: quantile(times, 0.99), max: Math.max(...times) }
}

export interface Client {
  get(path: string, token?: string): Promise<string>
}

export function createClient(base: string): Client {
  return {
    async get(path, token = SERVICE_TOKEN) {
      const res = await request(`${base}${path}`, { headers: { authorization: `Bearer ${token}` }, headersTimeout: 120_000, bodyTimeout: 120_000 })
      const text = await res.body.text()
      if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 200)}`)
      return text
    },
  }
}
