// `npm run bench`: runs every benchmark suite (or those named on the command line) in one process
// and prints each suite's table with its ratio against a floor measured in the same run.
import { describeHostLoad, readCpuTimes } from './host-load.js'

const SUITES: Record<string, () => Promise<{ run(): Promise<{ ok: boolean }> }>> = {
  protocol: () => import('./protocol/crypto.js'),
  sidecar: () => import('./sidecar/evaluate.js'),
  'sidecar-steps': () => import('./sidecar/cpu-budget.js'),
  fleet: () => import('./sidecar/fleet.js'),
  'fleet-revocation': () => import('./sidecar/fleet-revocation.js'),
  proxy: () => import('./proxy/protect.js'),
  'proxy-steps': () => import('./proxy/cpu-budget.js'),
  openapi: () => import('./openapi/convert-github.js'),
  'route-match': () => import('./openapi/match-github.js'),
  sdk: () => import('./sdk/middleware-overhead.js'),
  'sdk-steps': () => import('./sdk/cpu-budget.js'),
  'receipt-ingest': () => import('./stores/receipt-ingest.js'),
  'trust-query': () => import('./trust/query.js'),
  trust: () => import('./trust/trust.js'),
  'trust-copy': () => import('./trust/copy-append.js'),
  'core-form': () => import('./trust/core-form.js'),
  transparency: () => import('./transparency/log.js'),
  mcp: () => import('./mcp/tool-calls.js'),
  wire: () => import('./wire/tool-calls.js'),
}

const wanted = process.argv.slice(2)
const names = wanted.length > 0 ? wanted : Object.keys(SUITES)
let missed = 0
for (const name of names) {
  const load = SUITES[name]
  if (load === undefined) {
    process.stderr.write(`unknown bench suite "${name}"; known: ${Object.keys(SUITES).join(', ')}\n`)
    process.exit(2)
  }
  const before = readCpuTimes()
  const { ok } = await (await load()).run()
  const host = describeHostLoad(before, readCpuTimes())
  if (host !== undefined) process.stdout.write(`${host}\n`)
  if (!ok) missed++
}
process.stdout.write(`\n${names.length - missed}/${names.length} suites met their targets\n`)
