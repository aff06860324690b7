// The trust-control suite, run against each backend (trust-serve.test.ts: SQLite, trust-serve-postgres
// .test.ts: PostgreSQL): the real `gate trust serve` process over a receipt store seeded by a real
// `gate sidecar` (thousands of evaluations through /gate/evaluate across tenants, tools, capabilities and
// outcomes) plus receipts written through the store API with timestamps spread over ten days and signed
// by the same authority. On PostgreSQL the sidecar's receipts, issued capabilities and budget counters
// are copied into a fresh database first (the sidecar itself writes SQLite). Expected answers come from a
// model built from the store trust-control reads.
import t from 'tap'
import { trustSuiteFixture, type TrustSuiteBackend } from './trust-suite-fixture.js'
import { registerTrustQueryTests } from './trust-suite-queries.js'
import { registerTrustRouteTests } from './trust-suite-routes.js'
import { registerTrustLineageTests } from './trust-suite-lineage.js'

export type { TrustSuiteBackend } from './trust-suite-fixture.js'

/** Registers every trust-control test against `backend` (call once, at a test file's top level). */
export function runTrustServeSuite(backend: TrustSuiteBackend): void {
  // 10,000 evaluations through a real sidecar, then every section: minutes on a busy two-core host, beyond
  // tap's 300 s per file
  t.setTimeout(900_000)
  const s = trustSuiteFixture(backend)
  registerTrustQueryTests(s)
  registerTrustRouteTests(s)
  registerTrustLineageTests(s)
}
