// The stores trust-control reads and writes, declared here whichever backend holds them: the SQLite
// stores of one host (@gate/sidecar, handed in by the host: server/host-ports.ts) and the PostgreSQL
// stores of a fleet (postgres/). Both implement these interfaces and pass the same contract suites
// (testing/contracts/), so the wiring, the query engine, analytics and reports are written once. What
// every implementation shares beside the interfaces is in stores/: the receipt row, the signed columns,
// the input checks, group commit; the errors are in errors.ts.
import type { CapabilityToken, CaptureResult, CapturePlan, CheckpointStatement, TreeNode, TreeNodeReader } from '@gate/sdk'
import type { CaptureCancelResult, CaptureOptions, CorpusAggregateRow, CorpusFilter, CorpusGrouping, CorpusRow, CostUsageRow, GrantUsageRow, ListedReceiptFilter, ListedReceiptInput, ListedReceiptKind, ListedReceiptRow } from './ports.js'
import type { SignedColumns } from './stores/receipt-columns.js'
import type { CommittedReceipts, ReceiptRow, StoredReceipt } from './stores/receipt-row.js'

// ---- receipts ----

/** The receipt log: group-committed appends and core-form updates, followers of its commits. */
export interface TrustReceiptLog {
  /** Resolves after COMMIT; `stored` is false where the backend found the id already stored (PostgreSQL). */
  append(row: ReceiptRow): Promise<{ seq: number; stored?: boolean }>
  appendMany(rows: readonly ReceiptRow[]): Promise<{ seq: number; stored?: boolean }[]>
  /** Records the core form of the row at `seq`; true when that row exists. */
  setCoreJson(seq: number, coreJson: string): Promise<boolean>
  /** Calls `follower` after each commit of this process that appended receipts, in commit order. */
  onCommitted(follower: (batch: CommittedReceipts) => void): () => void
  flush(): Promise<void>
  close(): Promise<void>
  /** False after a failed commit until a later one succeeds. */
  readonly healthy: boolean
}

/** A row whose core form is not stored yet. */
export interface CorePendingRow {
  seq: number
  receiptId: string
  httpJson: string
}

/** Reads of committed receipts: point loads, cursor pages and the corpus queries of spec 03. */
export interface TrustReceiptReader {
  /** True when `aggregate` and window counts read rollups kept at ingest (no in-memory rollup needed). */
  readonly keepsRollups?: boolean
  /** The highest committed seq (0 when empty). */
  latestSeq(): Promise<number>
  count(): Promise<number>
  getById(receiptId: string): Promise<StoredReceipt | undefined>
  getBySeq(seq: number): Promise<StoredReceipt | undefined>
  /** Of `receiptIds`, those stored, with their seq. */
  findStored(receiptIds: readonly string[]): Promise<Map<string, number>>
  /** Up to `limit` receipts with seq > `cursorSeq`, in seq order. */
  listAfter(cursorSeq: number, limit: number): Promise<StoredReceipt[]>
  /** Every receipt with seq > `cursorSeq`, in seq order, read `pageSize` at a time. */
  iterate(cursorSeq?: number, pageSize?: number): AsyncGenerator<StoredReceipt>
  queryPage(filter: CorpusFilter, limit: number, order?: 'asc' | 'desc'): Promise<CorpusRow[]>
  countMatching(filter: CorpusFilter): Promise<number>
  aggregate(filter: CorpusFilter, grouping: CorpusGrouping, bucketSeconds?: number, perBucket?: boolean): Promise<CorpusAggregateRow[]>
  /** HttpReceipt rows without a core form, seq > `afterSeq`, optionally only those `kernelKey` signed. */
  listCorePending(afterSeq: number, limit: number, kernelKey?: string): Promise<CorePendingRow[]>
  /** Final receipts naming `decisionReceiptId` as their decision (searched after `decisionSeq`). */
  findFinals(decisionSeq: number, decisionReceiptId: string): Promise<StoredReceipt[]>
  /** Up to `limit` core-only receipts on chain `chainId` (spec 03 Receipt DAG), in seq order (stores/chain-members.ts). */
  listChain(chainId: string, limit: number): Promise<StoredReceipt[]>
}

/** Tool and child receipts, beside the receipts (spec 03 ReceiptListResponse routes). */
export interface ListedReceiptStorePort {
  /** An id already stored with the same bytes answers its seq with `stored: false`; other bytes are gate_conflict. */
  append(input: ListedReceiptInput): Promise<{ seq: number; stored: boolean }>
  /** The newest `limit` matching receipts, in seq order. */
  list(kind: ListedReceiptKind, filter: ListedReceiptFilter, limit: number): Promise<ListedReceiptRow[]>
}

export interface TrustReceiptStore {
  readonly isEphemeral: boolean
  log: TrustReceiptLog
  query: TrustReceiptReader
  listed: ListedReceiptStorePort
}

// ---- revocations, budgets, capabilities, enrolled keys ----

/** One revoked capability; `seq` orders revocations (a replication cursor). */
export interface RevocationRecord {
  seq: number
  capabilityId: string
  revokedAt: number
}

/** What `revoke` reports: `newlyRevoked` is false when the capability was already revoked. */
export interface RevokeResult {
  revoked: true
  newlyRevoked: boolean
}

export interface TrustRevocationStore {
  readonly isEphemeral: boolean
  /** Durable before it resolves; idempotent. */
  revoke(capabilityId: string): Promise<RevokeResult>
  /** SQLite answers from its in-memory set (kept fresh by the kernel's refresh), PostgreSQL from a read. */
  isRevoked(capabilityId: string): boolean | Promise<boolean>
  /** Up to `limit` revocations with seq > `afterSeq`, in seq order. */
  listAfter(afterSeq: number, limit: number): Promise<RevocationRecord[]>
  list(): Promise<RevocationRecord[]>
  /** The highest seq (0 when none). */
  latestSeq(): Promise<number>
  /**
   * Calls `listener` when a revocation commits, on any node sharing this store (PostgreSQL LISTEN/NOTIFY),
   * and whenever some may have been missed; absent where only this process writes.
   */
  watch?(listener: () => void): () => void
}

/** Everything recorded for one capability (or delegation link, `link:<id>`). */
export interface CapabilityUsage {
  capabilityId: string
  grants: GrantUsageRow[]
  costs: CostUsageRow[]
}

// declared in ports.ts (the capture port names them too), kept importable from here
export type { CaptureCancelResult, CaptureOptions } from './ports.js'

export interface TrustBudgetStore {
  readonly isEphemeral: boolean
  readonly healthy: boolean
  /** Captures every counter of the plan and adds its costs, or none (spec 03), committed before it resolves. */
  capture(plan: CapturePlan, options?: CaptureOptions): Promise<CaptureResult>
  /**
   * Undoes the capture named `captureId` (its counters and costs given back) if it was counted; if it was
   * not (yet), records the id so that it never is: a capture arriving later under it is refused.
   * Idempotent. Ids are kept CAPTURE_ID_RETENTION_SECONDS.
   */
  cancel(captureId: string): Promise<CaptureCancelResult>
  /** Grants, most recently used first. */
  listGrants(limit: number): Promise<GrantUsageRow[]>
  usage(capabilityId: string): Promise<CapabilityUsage>
}

/** Issued capability tokens: the lineage the agent filter joins on. */
export interface TrustCapabilityStore {
  readonly isEphemeral: boolean
  /** Records an issued token; a second token with the same id is refused. */
  remember(token: CapabilityToken): Promise<void>
  get(capabilityId: string): Promise<CapabilityToken | undefined>
  idsForSubject(subject: string): Promise<string[]>
  subjectsOf(capabilityIds: readonly string[]): Promise<Map<string, string>>
}

/** One enrolled signing key. */
export interface EnrolledKey {
  publicKey: string
  /** Who it belongs to (a sidecar's name), as given at enrolment. */
  label: string
  /** Unix seconds. */
  enrolledAt: number
}

/** Signing keys enrolled for ingest (POST /v1/keys/enroll). */
export interface EnrolledKeyStore {
  /** Enrols `publicKey`; a key already enrolled keeps its first label and time (`created: false`). */
  enroll(publicKey: string, label: string): Promise<EnrolledKey & { created: boolean }>
  get(publicKey: string): Promise<EnrolledKey | undefined>
  /** Oldest first. */
  list(): Promise<EnrolledKey[]>
  close(): Promise<void>
}

// ---- the authority key ----

/** The current authority key. */
export interface AuthorityState {
  /** The 32-byte signing seed (a copy). */
  seed: Uint8Array
  publicKey: string
  /** 1 for the first key, +1 per rotation. */
  generation: number
  /** Unix seconds when this key became current. */
  rotatedAt: number
}

/** The authority key store: cached keys, generation and rotation. */
export interface TrustAuthorityStore {
  readonly isEphemeral: boolean
  readonly path: string
  /** The current key, or undefined before the first `rotate` / `ensureKey`. */
  current(): AuthorityState | undefined
  /** Every generation's public key, oldest first. */
  trustedPublicKeys(): string[]
  /** The current key, created from `createSeed()` when there is none. */
  ensureKey(createSeed: () => Uint8Array): Promise<AuthorityState>
  /** Makes `newSeed` current at generation + 1, keeping every earlier public key trusted; wipes the retired seed. */
  rotate(newSeed: Uint8Array): Promise<AuthorityState>
  /** Reads the stored keys again (another process or node rotated). */
  reload(): Promise<void>
}

// ---- approvals ----

/** What binds an approval (and a nonce) to one request. */
export interface RequestBindings {
  callerIdentityHash: string
  method: string
  routePattern: string
  contentHash: string
}

/** A new pending approval. Times are Unix seconds. */
export interface NewApproval extends RequestBindings {
  approvalId: string
  requestId: string
  decisionReceiptId?: string | null
  createdAt: number
  expiresAt: number
}

export type ApprovalState = 'pending' | 'approved' | 'denied'

/** A stored approval. Expiry is not a state: compare `expiresAt` with the clock. */
export interface ApprovalRecord extends RequestBindings {
  approvalId: string
  requestId: string
  decisionReceiptId: string | null
  createdAt: number
  expiresAt: number
  state: ApprovalState
  responder: string | null
  reason: string | null
  respondedAt: number | null
  consumedAt: number | null
}

/** Who answered and why. */
export interface ApprovalResponse {
  responder?: string | null
  reason?: string | null
  /** Unix seconds, default the store's clock. */
  now?: number
}

/** Requests held for a human decision: answered once while pending and unexpired, consumed once by the same request. */
export interface ApprovalStorePort {
  readonly isEphemeral: boolean
  /** gate_conflict when the id is taken. */
  create(approval: NewApproval): Promise<ApprovalRecord>
  get(approvalId: string): Promise<ApprovalRecord | undefined>
  /** Pending and unexpired at `now`, oldest first. */
  listPending(now?: number): Promise<ApprovalRecord[]>
  /** gate_not_found for an unknown id, gate_conflict when not pending or expired. */
  respond(approvalId: string, decision: 'approve' | 'deny', response?: ApprovalResponse): Promise<ApprovalRecord>
  /** True once, for an approved, unexpired approval whose bindings match. */
  consume(approvalId: string, bindings: RequestBindings, now?: number): Promise<boolean>
}

// ---- the transparency log's tree and checkpoints ----

/** A committed receipt as the log reads it. */
export interface LogReceipt {
  seq: number
  receiptId: string
}

/**
 * A committed receipt as the audit reads it: its stored bytes (the HttpReceipt and its core form when
 * made, or the core receipt alone: `httpJson` null) and the filter columns queries read, as stored.
 */
export interface AuditedReceipt extends LogReceipt, SignedColumns {
  httpJson: string | null
  coreJson: string | null
}

/**
 * Where the transparency log keeps its tree and checkpoints: SQLite in the receipt file, PostgreSQL in
 * the trust-control database. The leaves are the receipts in commit order: leaf i is the receipt at seq
 * i + 1 (consecutive from 1, never reused). A backend stores the hash of every perfect subtree of the
 * tree it has built (level 0 = the leaf hashes), so any inclusion or consistency proof for any
 * checkpointed size is a handful of point reads, and the tree grows without a rebuild.
 */
export interface TransparencyLogBackend extends TreeNodeReader {
  /** Where the log lives (messages, health). */
  readonly location: string
  /** The log's random id, created with its tree. */
  logId(): Promise<string>
  /** Leaves the stored tree covers. */
  treeSize(): Promise<number>
  /** The newest committed receipt (seq and timestamp), undefined when none. */
  latestReceipt(): Promise<{ seq: number; timestamp: number } | undefined>
  /** Up to `limit` receipts with seq > `afterSeq`, in seq order. */
  receiptsAfter(afterSeq: number, limit: number): Promise<LogReceipt[]>
  /** Receipts with their stored JSON, seq > `afterSeq`, in seq order (the audit's scan). */
  auditedReceiptsAfter(afterSeq: number, limit: number): Promise<AuditedReceipt[]>
  /** Stored leaf hashes from `fromIndex` on, in index order (the audit's comparison). */
  leafHashesFrom(fromIndex: number, limit: number): Promise<Uint8Array[]>
  /**
   * Stores `nodes` and moves the tree size from `expectedSize` to `newSize` in one transaction; false
   * (and nothing written) when the stored size is no longer `expectedSize` (another process grew it).
   */
  appendNodes(expectedSize: number, newSize: number, nodes: readonly TreeNode[]): Promise<boolean>
  /**
   * In one transaction: reads the newest checkpoint and, unless `build` returns undefined, stores the
   * statement it builds from it. Resolves with the newest checkpoint afterwards and whether it is new.
   */
  addCheckpoint(build: (latest: CheckpointStatement | undefined) => CheckpointStatement | undefined): Promise<{ checkpoint: CheckpointStatement | undefined; created: boolean }>
  latestCheckpoint(): Promise<CheckpointStatement | undefined>
  checkpoint(treeSize: number): Promise<CheckpointStatement | undefined>
  /** Up to `limit` checkpoints with tree_size > `afterSize`, ascending. */
  checkpoints(afterSize: number, limit: number): Promise<CheckpointStatement[]>
  checkpointCount(): Promise<number>
  close(): Promise<void>
}

// ---- all of them ----

/** Every store trust-control reads and writes. */
export interface TrustStores {
  receipts: TrustReceiptStore
  revocations: TrustRevocationStore
  budgets: TrustBudgetStore
  capabilities: TrustCapabilityStore
  authority: TrustAuthorityStore
}
