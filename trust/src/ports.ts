// What trust-control needs from its host (the sidecar or `gate trust serve`), declared here so this
// package never imports its caller: an authenticator, the authority that signs, and the stores.
import type { IncomingMessage } from 'node:http'
import type { CapabilityScope, CapabilityToken, CaptureResult, CapturePlan, CheckpointStatement, ConsistencyProofRecord, CoreReceipt, HttpReceipt, InclusionProofRecord, KeyAlgorithmName, Signer } from '@gate/sdk'
import type { StoredReceiptStep } from './stored-receipt-check.js'

/** Who is calling: the admin service principal, or a tenant's read principal. */
export type Principal = { kind: 'admin' } | { kind: 'tenant'; tenant: string }

export type AuthResult = { ok: true; principal: Principal } | { ok: false; status: 401 | 403; message: string }

export interface TrustAuthenticator {
  authenticate(req: IncomingMessage): AuthResult
}

export interface CapabilityIssuerPort {
  /** Signs a new token for `subjectPublicKey` with the current authority key and remembers it. */
  issue(request: { subjectPublicKey: string; scope: CapabilityScope; ttlSeconds: number; runtimeAttestation?: unknown }): Promise<CapabilityToken>
  /** Why a scope would grant less than its issuer meant (a grant for a route the loaded policy lacks); absent on a host without a policy. */
  scopeWarnings?(scope: CapabilityScope): string[]
}

export interface RevocationPort {
  /**
   * Durably revokes; `newlyRevoked` is false when it was already revoked. `issued` is false when this
   * host's store never issued the id (revoked all the same: another issuer may have); absent when the
   * host cannot tell.
   */
  revoke(capabilityId: string): Promise<{ revoked: boolean; newlyRevoked: boolean; issued?: boolean }>
}

// ---- the receipt corpus ----

/** `allow`, `deny`, `cancelled`, `incomplete` (spec 03 outcome filter). */
export type ReceiptOutcome = 'allow' | 'deny' | 'cancelled' | 'incomplete'

/** A corpus filter: present members combine with AND; time and cost bounds are inclusive. */
export interface CorpusFilter {
  capabilityId?: string
  toolServer?: string
  toolName?: string
  outcome?: ReceiptOutcome
  /** timestamp >= since (Unix seconds). */
  since?: number
  /** timestamp <= until. */
  until?: number
  /** cost_units >= minCost; receipts without financial metadata never match. */
  minCost?: number
  maxCost?: number
  /** Charged in this currency; receipts without financial metadata never match. */
  costCurrency?: string
  /** Only receipts with financial metadata (a charged cost). */
  withCost?: boolean
  /** Only receipts that exercised a capability. */
  withCapability?: boolean
  /** The read context of a tenant principal: never settable from the wire. */
  tenant?: string
  /** The agent: stored subject key, or (for rows without one) a capability issued to it. */
  subject?: { subjectKey: string; capabilityIds: readonly string[] }
  /** seq > afterSeq (the cursor). */
  afterSeq?: number
  /** seq <= throughSeq (the snapshot a response is computed over). */
  throughSeq?: number
}

/** One receipt of a page, with the columns the reports read. */
export interface CorpusRow {
  seq: number
  receiptId: string
  timestamp: number
  tenant: string | null
  outcome: ReceiptOutcome
  capabilityId: string | null
  subjectKey: string | null
  toolServer: string
  toolName: string
  costUnits: number | null
  costCurrency: string | null
  attemptedCostUnits: number | null
  /** The signed HttpReceipt exactly as stored; null for a receipt that only has a core form (a tool call's). */
  httpJson: string | null
  /**
   * The stored core receipt: for an HttpReceipt, null until the row is first read with its signer's key
   * at hand; for a core-only receipt (httpJson null), the signed receipt itself, never null.
   */
  coreJson: string | null
}

/** A receipt loaded by id, with its decision/final linkage. */
export interface CorpusReceipt extends CorpusRow {
  kind: 'decision' | 'final'
  decisionReceiptId: string | null
}

export type CorpusGrouping = 'none' | 'time' | 'tool' | 'subject' | 'cost'

/** Counts and cost sums of one group. */
export interface CorpusAggregateRow {
  bucketStart?: number
  toolServer?: string
  toolName?: string
  /** `subject` and `cost` groupings: the stored subject key (null when the kernel did not know it). */
  subjectKey?: string | null
  /** `subject` grouping: set only when `subjectKey` is null (resolve it through the lineage); `cost`: always. */
  capabilityId?: string | null
  costCurrency?: string | null
  total: number
  allow: number
  deny: number
  cancelled: number
  incomplete: number
  charged: number
  attempted: number
}

/** The receipt store as trust-control reads it. */
export interface ReceiptCorpusPort {
  /** True when `aggregate` reads rollups the store keeps at ingest: analytics needs no in-memory rollup. */
  readonly keepsRollups?: boolean
  /** The highest committed seq (0 when empty). */
  latestSeq(): Promise<number>
  /** Up to `limit` matching receipts by seq: the oldest first (`asc`, default) or the newest first (`desc`). */
  queryPage(filter: CorpusFilter, limit: number, order?: 'asc' | 'desc'): Promise<CorpusRow[]>
  countMatching(filter: CorpusFilter): Promise<number>
  /** Grouped counts and sums; `bucketSeconds` sizes `time` groups and, with `perBucket`, splits the others by time too. */
  aggregate(filter: CorpusFilter, grouping: CorpusGrouping, bucketSeconds?: number, perBucket?: boolean): Promise<CorpusAggregateRow[]>
  getById(receiptId: string): Promise<CorpusReceipt | undefined>
  /** Final receipts that name `receiptId` as their decision (searched after its seq). */
  findFinals(decisionSeq: number, receiptId: string): Promise<CorpusReceipt[]>
  /** Up to `limit` core-only receipts of one receipt DAG chain, in seq order. */
  listChain(chainId: string, limit: number): Promise<CorpusReceipt[]>
  /** Persists a core form computed on the read path. */
  setCoreJson(seq: number, coreJson: string): Promise<unknown>
}

/** `tool` or `child` receipts appended through trust-control. */
export type ListedReceiptKind = 'tool' | 'child'

/** A tool or child receipt to append. */
export interface ListedReceiptInput {
  kind: ListedReceiptKind
  receiptId: string
  /** Stored and served unchanged. */
  json: string
  timestamp?: number | null
  tenant?: string | null
  capabilityId?: string | null
  toolServer?: string | null
  toolName?: string | null
  sessionId?: string | null
  parentRequestId?: string | null
  requestId?: string | null
}

/** Filters of the tool and child receipt listings (exact matches, AND). */
export interface ListedReceiptFilter {
  receiptId?: string
  tenant?: string
  capabilityId?: string
  toolServer?: string
  toolName?: string
  sessionId?: string
  parentRequestId?: string
  requestId?: string
  /** The receipt DAG chain (spec 03): receipts whose top-level `chainId` is this. */
  chainId?: string
  since?: number
  until?: number
}

/** A stored tool or child receipt. */
export interface ListedReceiptRow {
  seq: number
  receiptId: string
  json: string
}

export interface ListedReceiptPort {
  /** Where they are kept (`ReceiptListResponse.backend`). */
  readonly backend: string
  append(input: ListedReceiptInput): Promise<{ seq: number; stored: boolean }>
  list(kind: ListedReceiptKind, filter: ListedReceiptFilter, limit: number): Promise<ListedReceiptRow[]>
}

/** The capability lineage: which tokens were issued to which agent key. */
export interface LineagePort {
  idsForSubject(subjectKey: string): Promise<string[]>
  subjectsOf(capabilityIds: readonly string[]): Promise<Map<string, string>>
}

/** Invocation usage of one grant (budget store). */
export interface GrantUsageRow {
  capabilityId: string
  grantKey: string
  used: number
  maxInvocations: number
  updatedAt: number
}

export interface CostUsageRow {
  capabilityId: string
  grantKey: string
  currency: string
  units: number
  attemptedUnits: number
  updatedAt: number
}

export interface BudgetReportPort {
  /** Grants, most recently used first. */
  listGrants(limit: number): Promise<GrantUsageRow[]>
  usage(capabilityId: string): Promise<{ grants: GrantUsageRow[]; costs: CostUsageRow[] }>
}

// ---- authority and health ----

/** The spec 03 authority block (without the derived `trustedKeyCount`). */
export interface AuthorityStatus {
  publicKey: string
  /** 1 for the first key, +1 per rotation; 0 when the key is not recorded in an authority store. */
  generation: number
  /** Unix seconds the current key became current; null when unknown. */
  rotatedAt: number | null
  /** Every key receipts and tokens of this authority verify against, oldest first. */
  trustedPublicKeys: string[]
}

export interface AuthorityPort {
  status(): AuthorityStatus
  /** The current signer (core receipts are signed with it). */
  signer(): Signer
  /**
   * New key, generation + 1, earlier keys stay trusted; throws gate_conflict when the key is pinned. The
   * new key has the current key's algorithm, or `algorithm` (a `gate keygen --algorithm` name).
   */
  rotate(options?: { algorithm?: KeyAlgorithmName }): Promise<AuthorityStatus>
}

/** One store as `/health` reports it. */
export interface StoreHealth {
  backend: 'durable' | 'ephemeral' | 'remote'
  healthy: boolean
}

export interface HealthPort {
  stores(): Record<string, StoreHealth>
}

// ---- the transparency log (docs/transparency.md) ----

/** The log's state (`gate receipt health`, GET /v1/checkpoints/status). */
export interface TransparencyStatus {
  store: { location: string; reachable: boolean; healthy: boolean }
  /** The newest committed receipt. */
  lastCommit: { seq: number; timestamp: number } | null
  /** Leaves (receipts) the tree covers. */
  treeSize: number
  /** Committed receipts not in the tree yet. */
  pendingLeaves: number
  lastCheckpoint: { treeSize: number; rootHash: string; timestamp: number; signerKey: string } | null
  checkpointCount: number
  /** Committed receipts the newest checkpoint does not cover. */
  uncheckpointedReceipts: number
  logId: string
  /** The checkpointer's last background failure, null when its last pass succeeded. */
  lastError: string | null
}

export interface TransparencyPort {
  status(): Promise<TransparencyStatus>
  /** Throws gate_not_found (unknown receipt or checkpoint) or gate_conflict (not checkpointed yet). */
  inclusionProof(receiptId: string, treeSize?: number): Promise<InclusionProofRecord>
  consistencyProof(first: number, second: number): Promise<ConsistencyProofRecord>
  checkpoint(treeSize: number): Promise<CheckpointStatement | undefined>
  /** Up to `limit` checkpoints with tree_size > `afterSize`, ascending. */
  checkpoints(afterSize: number, limit: number): Promise<CheckpointStatement[]>
  /** Commits pending receipts, then checkpoints the whole log unless the newest checkpoint covers it. */
  flush(timeoutMs: number): Promise<{ checkpoint: CheckpointStatement | undefined; created: boolean }>
}

// ---- a fleet: ingest from sidecars, central budgets, the cluster (docs/postgres.md) ----

/**
 * One receipt a sidecar ships, verified before this port sees it, with what its row records beyond it:
 * an HttpReceipt, or a receipt that only has a core form (a tool call's `gate.receipt.v1`, which carries
 * no request id). `json` is its canonical JSON: what was signed, stored byte for byte.
 */
export type IngestItem = IngestColumns &
  ({ form: 'http'; receipt: HttpReceipt; json: string } | { form: 'core'; receipt: CoreReceipt; json: string; requestId: string })

/** The row columns an ingested receipt brings besides the receipt. */
export interface IngestColumns {
  tenant: string | null
  subjectKey: string | null
  costUnits: number | null
  costCurrency: string | null
  attemptedCostUnits: number | null
  kind?: 'decision' | 'final'
  decisionReceiptId: string | null
}

/** A signing key enrolled for ingest. */
export interface EnrolledSigner {
  publicKey: string
  label: string
  enrolledAt: number
}

export interface ReceiptIngestPort {
  /** Stores the receipts (all or none); a receipt id already stored is not stored again (`stored: false`). */
  ingest(items: readonly IngestItem[]): Promise<{ seq: number; stored: boolean }[]>
  /** Of `keys`, those whose receipts are accepted: enrolled, or one of the authority's own keys. */
  acceptedSigners(keys: readonly string[]): Promise<Set<string>>
  /** Enrols a sidecar's signing key (idempotent: a key keeps its first label). */
  enroll(publicKey: string, label: string): Promise<EnrolledSigner & { created: boolean }>
  enrolled(): Promise<EnrolledSigner[]>
}

/** How one capture is identified and bounded (a fleet's sidecar sends both). */
export interface CaptureOptions {
  /**
   * Names this capture (1-128 printable ASCII): a retry under the same id answers the first result and
   * counts nothing more; a capture whose id was cancelled first is refused (gate_conflict).
   */
  captureId?: string
  /**
   * `performance.now()` of this process past which the capture must not commit: it is refused with
   * CaptureDeadlineError (503) and nothing is counted.
   */
  deadlineAt?: number
}

/** What cancelling a capture did. */
export interface CaptureCancelResult {
  captureId: string
  /** True when a committed capture was reversed now; false when nothing was counted under the id (or it was already reversed). */
  reversed: boolean
}

export interface BudgetCapturePort {
  /** Captures every counter of the plan atomically, or none (spec 03), committed before it resolves. */
  capture(plan: CapturePlan, options?: CaptureOptions): Promise<CaptureResult>
  /** Gives back the capture `captureId` names, or makes sure it never counts (TrustBudgetStore.cancel). */
  cancel(captureId: string): Promise<CaptureCancelResult>
}

/** The spec 03 `cluster` block of /health. */
export interface ClusterBlock {
  peerCount: number
  healthyPeers: number
  unhealthyPeers: number
  unknownPeers: number
  partitionedPeers: number
  lastErrorCount: number
  selfUrl: string
  leaderUrl: string | null
  hasQuorum: boolean
  quorumSize: number
  reachableNodes: number
  role: 'leader' | 'follower' | 'candidate'
  electionTerm: number
}

/** A clustered node's view of its fleet. */
export interface ClusterPort {
  block(): ClusterBlock
  /** The peer-authenticated status (spec 03: adds per-peer state, snapshot counters, last error, replication heads). */
  internalStatus(): Promise<Record<string, unknown>>
  /** Verifies a peer request (`gate.cluster.peer.v1`); throws PeerAuthError. */
  authenticatePeer(req: IncomingMessage, path: string): void
}

/** Everything the trust routes read and write. */
export interface TrustDeps {
  auth: TrustAuthenticator
  corpus: ReceiptCorpusPort
  listed: ListedReceiptPort
  lineage: LineagePort
  budgets: BudgetReportPort
  authority: AuthorityPort
  health: HealthPort
  issuer: CapabilityIssuerPort
  revocations: RevocationPort
  /** The receipt log's Merkle tree and checkpoints; absent where receipts are kept in memory or checkpointing is off. */
  transparency?: TransparencyPort
  /** Receipts shipped by sidecars (POST /v1/receipts/ingest, /v1/keys/enroll); absent where not offered. */
  ingest?: ReceiptIngestPort
  /** Central budget captures (POST /v1/budgets/capture); absent where not offered. */
  budgetCapture?: BudgetCapturePort
  /** The revocation feed sidecars mirror (GET /v1/revocations); absent where not offered. */
  revocationFeed?: RevocationFeedPort
  /** The cluster (a database-backed trust-control): /health's cluster block, peer status, quorum for writes. */
  cluster?: ClusterPort
  /** Unix seconds. */
  now: () => number
  /** Operational log line (never given tokens). */
  log: (line: string) => void
  /** Called each time a read refuses a stored receipt its core form because it does not verify (a metric). */
  onUnverifiedReceipt?: (failedStep: StoredReceiptStep) => void
}

/** One revocation of the feed sidecars mirror; `seq` is its cursor. */
export interface RevocationFeedEntry {
  seq: number
  capabilityId: string
  revokedAt: number
}

/** The revocations in commit order (GET /v1/revocations, the sidecars' mirror). */
export interface RevocationFeedPort {
  /** Up to `limit` revocations with seq > `afterSeq`, in seq order. */
  listAfter(afterSeq: number, limit: number): Promise<RevocationFeedEntry[]>
  /** The highest seq (0 when none). */
  latestSeq(): Promise<number>
  /** Calls `listener` after each revocation (and authority rotation) this process commits, and each revocation another node commits where the store hears of it; returns an unsubscribe. */
  onRevoked(listener: () => void): () => void
}
