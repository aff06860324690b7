// OpenAPI conversion benchmark: GitHub's REST description (@octokit/openapi, api.github.com.json,
// ~13 MB, ~1,100 operations) converted to tool definitions by Gate (manifestFromSpec) and, in the
// same run and interleaved rounds, by openapi-mcp-generator's programmatic API (getToolsFromOpenApi
// with dereference: true, the variant that resolves $refs as Gate does; without it the generator
// leaves every $ref unresolved and warns once per reference). Both times start from the file on disk.
// Target: Gate at least as fast as openapi-mcp-generator and under 1 s (median).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { manifestFromSpec } from '@gate/openapi'
import { getToolsFromOpenApi } from 'openapi-mcp-generator'
import { median, printTable } from '../measure.js'

const ROUNDS = 7
const TARGET_MS = 1000

/** One row of the result table. */
export interface ConversionRow {
  converter: string
  tools: number
  median_ms: number
  min_ms: number
  max_ms: number
  rounds: number
  vs_gate: string
}

/** Runs the benchmark, prints its table and returns the rows (ok: the target is met). */
export async function run(): Promise<{ ok: boolean; rows: ConversionRow[] }> {
  const file = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json')
  const gate = async (): Promise<number> => manifestFromSpec(readFileSync(file, 'utf8')).tools.length
  const generator = async (): Promise<number> => (await getToolsFromOpenApi(file, { dereference: true })).length

  // One warm-up each, then interleaved rounds so load from other processes hits both alike.
  const counts = [await gate(), await generator()]
  const times: number[][] = [[], []]
  for (let i = 0; i < ROUNDS; i++) {
    for (const [j, fn] of [gate, generator].entries()) {
      const started = performance.now()
      await fn()
      times[j]!.push(performance.now() - started)
    }
  }
  const [gateMs, generatorMs] = times.map(median) as [number, number]
  const row = (converter: string, j: number, ms: number): ConversionRow => ({
    converter,
    tools: counts[j]!,
    median_ms: Math.round(ms),
    min_ms: Math.round(Math.min(...times[j]!)),
    max_ms: Math.round(Math.max(...times[j]!)),
    rounds: ROUNDS,
    vs_gate: `${(ms / gateMs).toFixed(2)}x`,
  })
  const rows = [row('gate manifestFromSpec', 0, gateMs), row('openapi-mcp-generator getToolsFromOpenApi (dereference)', 1, generatorMs)]
  printTable(
    'OpenAPI → tools: api.github.com.json (@octokit/openapi)',
    rows.map(r => ({ ...r, tools: String(r.tools), rounds: String(r.rounds), median_ms: String(r.median_ms), min_ms: String(r.min_ms), max_ms: String(r.max_ms) })),
  )
  const ok = gateMs <= generatorMs && gateMs < TARGET_MS
  process.stdout.write(
    `gate ${Math.round(gateMs)} ms vs openapi-mcp-generator ${Math.round(generatorMs)} ms: ` +
      `${(generatorMs / gateMs).toFixed(2)}x; target (≤ generator and < ${TARGET_MS} ms) ${ok ? 'met' : 'missed'}\n`,
  )
  return { ok, rows }
}

// Runnable on its own: node bench/dist/openapi/convert-github.js
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { ok } = await run()
  process.exitCode = ok ? 0 : 1
}
