// Route matching benchmark: matchRoute over GitHub's REST route table (@octokit/openapi, ~1,200
// routes), with a request mix of concrete paths, templated paths, unmatched paths and ambiguous
// ones. The kernel calls matchRoute once per request. Target: ≥ 100,000 matches/s (the kernel needs
// tens of thousands per second).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { matchRoute, routeTableFromSpec } from '@gate/openapi'
import { measureRate, printTable } from '../measure.js'

const TARGET_PER_SECOND = 100_000

/** One row of the result table. */
export interface MatchRow {
  request: string
  matches_per_s: number
  pattern: string
}

const REQUESTS: [string, string][] = [
  ['GET', '/repos/octocat/hello-world'],
  ['GET', '/repos/octocat/hello-world/pulls/1347/comments?per_page=100'],
  ['POST', '/repos/octocat/hello-world/issues'],
  ['GET', '/user'],
  ['DELETE', '/orgs/github/teams/justice-league/memberships/octocat'],
  ['GET', '/no/such/route/here'],
  ['GET', '/repos/octocat/%2e%2e/admin'],
]

/** Runs the benchmark, prints its table and returns the rows (ok: every row meets the target). */
export async function run(): Promise<{ ok: boolean; rows: MatchRow[] }> {
  const file = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json')
  const table = routeTableFromSpec(readFileSync(file, 'utf8'))
  const rows = REQUESTS.map(([method, path]): MatchRow => ({
    request: `${method} ${path}`,
    matches_per_s: measureRate(() => matchRoute(table, method, path)),
    pattern: matchRoute(table, method, path).pattern,
  }))
  let i = 0
  const mixed = measureRate(() => {
    const [method, path] = REQUESTS[i++ % REQUESTS.length]!
    return matchRoute(table, method, path)
  })
  rows.push({ request: `mix of the above (${table.routes.length} routes)`, matches_per_s: mixed, pattern: '' })
  printTable('matchRoute: api.github.com.json route table', rows as unknown as Record<string, string | number>[])
  const ok = rows.every(r => r.matches_per_s >= TARGET_PER_SECOND)
  process.stdout.write(`target (every row ≥ ${TARGET_PER_SECOND.toLocaleString('en-US')} matches/s) ${ok ? 'met' : 'missed'}\n`)
  return { ok, rows }
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { ok } = await run()
  process.exitCode = ok ? 0 : 1
}
