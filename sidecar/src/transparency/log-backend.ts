// Where the transparency log keeps its tree and checkpoints: the one interface a second backend
// (PostgreSQL) implements. SQLite's is ../stores/transparency-log-store.ts, in the receipt file itself.
//
// The leaves are the receipts in commit order: leaf i is the receipt at seq i + 1 (seq is the receipts
// table's INTEGER PRIMARY KEY, consecutive from 1, never reused). A backend stores the hash of every
// perfect subtree of the tree it has built (level 0 = the leaf hashes), so any inclusion or consistency
// proof for any checkpointed size is a handful of point reads, and the tree grows without a rebuild.
import type { CheckpointStatement, TreeNode, TreeNodeReader } from '@gate/sdk'
import type { SignedColumns } from '../stores/receipt-columns.js'

/** A committed receipt as the log reads it. */
export interface LogReceipt {
  seq: number
  receiptId: string
}

/**
 * A committed receipt as the audit reads it: its stored bytes (the HttpReceipt and its core form when
 * made, or the core receipt alone) and the filter columns queries read, as stored.
 */
export interface AuditedReceipt extends LogReceipt, SignedColumns {
  httpJson: string | null
  coreJson: string | null
}

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
