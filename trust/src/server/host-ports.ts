// What `createTrustServer` borrows from the process that runs it, declared here so this package never
// imports its caller: the `gate` CLI (@gate/sidecar, app/trust-host.ts) wires in its HTTP server, its
// SQLite stores, its receipt writer and transparency log, its metrics and its log, all configured from
// the command's flags before the server starts. Trust-control's own parts (stores on PostgreSQL, the
// authority, the fleet ports, the cluster node, the routes) are built here, in server/.
import type { HttpReceiptBody, Signer } from '@gate/sdk'
import type { TransparencyPort, TrustAuthenticator } from '../ports.js'
import type { TrustHandler } from '../routes/trust-route.js'
import type { StoredReceiptStep } from '../stored-receipt-check.js'
import type { EnrolledKeyStore, TransparencyLogBackend, TrustReceiptStore, TrustStores } from '../store-ports.js'

/** A route the host's server mounts: a literal path or one with `:name` segments. */
export interface HostRoute {
  method: string
  path: string
  handler: TrustHandler
}

/** Options of `TrustServerHost.serve`. */
export interface ServeOptions {
  /** Answers every request no route matched (every request, until routes are added). */
  fallback: (req: Parameters<TrustHandler>[0], res: Parameters<TrustHandler>[1], url: URL) => void
  /** Store name → healthy, read by the metrics at scrape time. */
  storeHealth: () => Record<string, boolean>
}

/** The listening server. */
export interface TrustListener {
  /** `http(s)://host:port` as bound. */
  url: string
  /** Mounts a route (first match by method and path template; HEAD is answered as GET). */
  add(route: HostRoute): void
  inFlight(): number
  /** Stops accepting, waits for in-flight requests (at most `graceMs`), then closes the connections. */
  drain(graceMs: number): Promise<void>
}

/** Options of `TrustServerHost.openSqliteStores`: the SQLite files of one host. */
export interface SqliteStoresRequest {
  /** The durable receipt store; the others default to its siblings. */
  receiptDb: string
  revocationDb?: string
  budgetDb?: string
  authorityDb?: string
  log: (line: string) => void
}

/** The SQLite stores of one host, opened for trust-control. */
export interface SqliteTrustStores extends TrustStores {
  enrolledKeys: EnrolledKeyStore
  /** The transparency log's tree and checkpoints, in the receipt file. */
  openTransparencyBackend(): Promise<TransparencyLogBackend>
  /** Startup log lines saying where the stores are. */
  describe(): string[]
  /** Flushes and closes every store, receipts first. */
  close(): Promise<void>
}

/** Writes trust-control's own receipts (a revocation's): signs, appends and resolves after the commit. */
export interface TrustReceiptWriter {
  write(body: HttpReceiptBody, context?: { kind?: 'decision' | 'final' }): Promise<unknown>
  /** False after a failed commit until a later one succeeds. */
  readonly healthy: boolean
}

/** The transparency log running over a receipt store: the proof service and its checkpointer. */
export interface TransparencyService extends TransparencyPort {
  /** Where its tree and checkpoints are. */
  readonly location: string
  /** Stops the checkpointer (a final checkpoint is `flush`'s job). */
  close(): Promise<void>
}

/** Options of `TrustServerHost.startReceipts`. */
export interface ReceiptServicesRequest {
  /** The receipt store the writer appends to and the log covers. */
  receipts: TrustReceiptStore
  /** The authority signer, read at each receipt and checkpoint (it rotates). */
  signer: () => Signer
  /** The log's backend: in the SQLite receipt file or the PostgreSQL database. */
  openTransparencyBackend: () => Promise<TransparencyLogBackend>
  /** Of the keys that signed rows other nodes or processes appended, those the log accepts as leaves. */
  acceptedSigners: (keys: readonly string[]) => Promise<Set<string>>
  log: (line: string) => void
}

/** The writer of trust-control's receipts and the transparency log that follows it. */
export interface ReceiptServices {
  writer: TrustReceiptWriter
  /** Undefined when the host runs no transparency log (switched off). */
  transparency: TransparencyService | undefined
}

/** Where a stored receipt was refused a signature because it does not verify. */
export type UnverifiedReceiptPath = 'read' | 'rotation' | 'checkpoint'

/** The service's metrics (GET /metrics). */
export interface TrustMetrics {
  recordUnverifiedReceipt(path: UnverifiedReceiptPath, step: StoredReceiptStep): void
  /** GET /metrics, readable with the service token (and whatever scrape-only token the host was given). */
  createRoute(auth: TrustAuthenticator): TrustHandler
  /** Who may read /metrics, for the startup log. */
  readonly readers: string
}

/** What the `gate` process provides to `createTrustServer`. */
export interface TrustServerHost {
  /** Fails (before any store file is created) when the listen address cannot be bound. */
  checkListen(): Promise<void>
  /** Listens on the configured address (TLS and timeouts as configured); routes are added to the listener. */
  serve(options: ServeOptions): Promise<TrustListener>
  openSqliteStores(request: SqliteStoresRequest): Promise<SqliteTrustStores>
  /** Starts the receipt writer and the transparency log over `request.receipts`. */
  startReceipts(request: ReceiptServicesRequest): Promise<ReceiptServices>
  /** Undefined when metrics are off. */
  metrics: TrustMetrics | undefined
  /** The operational log (never given tokens): a line starting "warning:" is a warning. */
  log: (line: string) => void
}
