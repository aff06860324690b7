// The Prometheus metrics of a Gate service (docs/observability.md), on one prom-client registry per
// process. Labels are bounded by construction: route labels are OpenAPI route patterns or router
// templates (an unmatched path is "unmatched", never the raw path), reasons are the kernel's
// `reason_code`s, and no label ever carries an id, a subject or a caller. What is recorded per request
// (decisions, durations, commits) goes through metric-series.ts, which allocates nothing per record;
// the gauges are read at scrape time.
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { Verdict } from '@gate/sdk'
import { SeriesCounter, SeriesHistogram } from './metric-series.js'

/** The route label of a request no route pattern matched. */
export const UNMATCHED_ROUTE = 'unmatched'

// Seconds. Evaluation is sub-millisecond when idle and tens of milliseconds under a commit backlog;
// an upstream hop can take the proxy's whole 20 s timeout.
const EVALUATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
const PROXY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20]
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

/** Default metrics not served: `sum(nodejs_active_handles)` etc. give the same numbers (docs/observability.md). */
export const DROPPED_DEFAULT_METRICS: readonly string[] = Object.freeze(['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])

/** Live values read at scrape time (never on the request path). */
export interface MetricSources {
  /** Store name → healthy (the receipt store: false after a failed commit until one succeeds). */
  storeHealth?: () => Record<string, boolean>
  /** Open TCP connections or Unix-socket peers of the service. */
  openConnections?: () => Promise<number>
  inFlightRequests?: () => number
}

/** Where a stored receipt was refused a signature because it does not verify (gate_receipts_unverified_total). */
export type UnverifiedReceiptPath = 'read' | 'rotation' | 'checkpoint'

export interface GateMetrics {
  readonly registry: Registry
  /** One decision: its verdict, the matched route pattern (or UNMATCHED_ROUTE), its method and how long it took. */
  recordDecision(verdict: Verdict, route: string, method: string, durationSeconds: number): void
  /** A stored receipt that failed verification where it would have been signed over, by path and failing step. */
  recordUnverifiedReceipt(path: UnverifiedReceiptPath, step: string): void
  /** An evaluation that produced no decision (fail closed), by `gate_*` code. */
  recordEvaluationFailure(code: string): void
  recordReceiptWrite(durationSeconds: number): void
  recordReceiptBatch(size: number): void
  recordStoreError(store: string): void
  recordProxy(route: string, status: number, durationSeconds: number): void
  recordHttp(route: string, method: string, status: number, durationSeconds: number): void
  setSources(sources: MetricSources): void
}

const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx']

/** `2xx` for 204: the constant string, not a new one per request. */
function statusClass(status: number): string {
  return STATUS_CLASSES[Math.floor(status / 100)] ?? `${Math.floor(status / 100)}xx`
}

/** The reason label: the deny's reason_code (or guard), "allowed", or the verdict kind. */
export function reasonLabel(verdict: Verdict): string {
  if (verdict.verdict === 'allow') return 'allowed'
  if (verdict.verdict === 'deny') return verdict.details?.reason_code ?? verdict.guard
  return verdict.verdict
}

/** Creates the metrics of one service; `service` becomes the constant `service` label of gate_build_info. */
export function createGateMetrics(options: { service: string; version: string }): GateMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  // prom-client's totals of the per-type gauges are gauges named *_total, which Prometheus reserves for
  // counters (promtool check metrics fails them); the per-type gauges stay, and sum() gives each total
  for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(name)
  let sources: MetricSources = {}
  new Gauge({
    name: 'gate_build_info',
    help: 'Constant 1, labelled with the running service and version.',
    labelNames: ['service', 'version'],
    registers: [registry],
  }).set({ service: options.service, version: options.version }, 1)

  const decisions = new SeriesCounter('gate_decisions_total', 'Decisions signed and stored, by verdict, route pattern, method and reason code.', ['verdict', 'route', 'method', 'reason'], registry)
  const evaluation = new SeriesHistogram({ name: 'gate_evaluation_duration_seconds', help: 'Time from request to committed decision receipt, by verdict.', labelNames: ['verdict'], buckets: EVALUATION_BUCKETS }, registry)
  const failures = new SeriesCounter('gate_evaluation_failures_total', 'Evaluations that ended without a decision (answered 500, fail closed), by error code.', ['code'], registry)
  const receiptWrite = new SeriesHistogram({ name: 'gate_receipt_commit_duration_seconds', help: 'Time from handing a receipt to the writer until its row is committed (signing included).', labelNames: [], buckets: EVALUATION_BUCKETS }, registry).unlabelled
  const receiptBatch = new SeriesHistogram({ name: 'gate_receipt_commit_batch_size', help: 'Receipts per committed transaction of the receipt log (group commit).', labelNames: [], buckets: BATCH_BUCKETS }, registry).unlabelled
  const storeErrors = new SeriesCounter('gate_store_errors_total', 'Failed store writes, by store.', ['store'], registry)
  const unverified = new SeriesCounter('gate_receipts_unverified_total', 'Stored receipts refused a signature because they do not verify (core form on read, key-rotation conversion, transparency log leaf), by path and failing step; each refusal counts.', ['path', 'step'], registry)
  const proxy = new SeriesHistogram({ name: 'gate_proxy_duration_seconds', help: 'Proxied requests (gate api protect) from arrival to the end of the answer, by route pattern and status class.', labelNames: ['route', 'status_class'], buckets: PROXY_BUCKETS }, registry)
  const http = new SeriesHistogram({ name: 'gate_http_request_duration_seconds', help: "Requests to the service's own routes, by route template, method and status.", labelNames: ['route', 'method', 'status'], buckets: EVALUATION_BUCKETS }, registry)
  new Gauge({
    name: 'gate_store_healthy',
    help: '1 while the store accepts writes, 0 after a failed commit until one succeeds.',
    labelNames: ['store'],
    registers: [registry],
    collect() {
      for (const [store, healthy] of Object.entries(sources.storeHealth?.() ?? {})) this.set({ store }, healthy ? 1 : 0)
    },
  })
  new Gauge({
    name: 'gate_open_connections',
    help: 'Client connections open to the service.',
    registers: [registry],
    async collect() {
      if (sources.openConnections !== undefined) this.set(await sources.openConnections())
    },
  })
  new Gauge({
    name: 'gate_http_requests_in_flight',
    help: 'Requests being answered.',
    registers: [registry],
    collect() {
      if (sources.inFlightRequests !== undefined) this.set(sources.inFlightRequests())
    },
  })

  return {
    registry,
    recordDecision(verdict, route, method, seconds) {
      decisions.series(verdict.verdict, route, method, reasonLabel(verdict)).inc()
      evaluation.series(verdict.verdict).observe(seconds)
    },
    recordEvaluationFailure: code => failures.series(code).inc(),
    recordUnverifiedReceipt: (path, step) => unverified.series(path, step).inc(),
    recordReceiptWrite: seconds => receiptWrite.observe(seconds),
    recordReceiptBatch: size => receiptBatch.observe(size),
    recordStoreError: store => storeErrors.series(store).inc(),
    recordProxy: (route, status, seconds) => proxy.series(route, statusClass(status)).observe(seconds),
    // the status is a label as a number here; it is written as text when scraped
    recordHttp: (route, method, status, seconds) => http.series(route, method, status).observe(seconds),
    setSources(next) {
      sources = next
    },
  }
}
