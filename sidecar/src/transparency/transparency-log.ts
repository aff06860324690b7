// The transparency log as trust-control serves it (trust's TransparencyPort): inclusion proofs of a
// receipt in a checkpoint, consistency proofs between two checkpoints, the checkpoints themselves, the
// log's status, and checkpoint creation (through the checkpointer). Every proof is verified against its
// own statement before it is served: a tree that no longer matches its checkpoint fails closed.
import {
  createConsistencyProofRecord,
  createInclusionProofRecord,
  consistencyProof,
  inclusionProof,
  BadRequestError,
  NotFoundError,
  verifyConsistencyProofRecord,
  verifyInclusionProofRecord,
  type CheckpointStatement,
  type ConsistencyProofRecord,
  type InclusionProofRecord,
} from '@gate/sdk'
import type { TransparencyLogBackend, TransparencyStatus } from '@gate/trust'
import { LogIntegrityError, NotCheckpointedError } from '../errors.js'
import type { CheckpointResult } from './checkpointer.js'
import type { CheckpointerControl } from './checkpointer-control.js'

export interface TransparencyLogOptions {
  backend: TransparencyLogBackend
  /** The seq of a committed receipt id (the receipt store's point load). */
  findSeq: (receiptId: string) => Promise<number | undefined>
  checkpointer: CheckpointerControl
  /** Whether the receipt writer is healthy (its last commit succeeded). */
  writerHealthy?: () => boolean
}

export class TransparencyLog {
  readonly #backend: TransparencyLogBackend
  readonly #findSeq: (receiptId: string) => Promise<number | undefined>
  readonly #checkpointer: CheckpointerControl
  readonly #writerHealthy: () => boolean

  constructor(options: TransparencyLogOptions) {
    this.#backend = options.backend
    this.#findSeq = options.findSeq
    this.#checkpointer = options.checkpointer
    this.#writerHealthy = options.writerHealthy ?? (() => true)
  }

  get backend(): TransparencyLogBackend {
    return this.#backend
  }

  /** Store reachability, last commit, tree size, last checkpoint and the lag between them. */
  async status(): Promise<TransparencyStatus> {
    const [latest, treeSize, checkpoint, checkpointCount] = await Promise.all([
      this.#backend.latestReceipt(),
      this.#backend.treeSize(),
      this.#backend.latestCheckpoint(),
      this.#backend.checkpointCount(),
    ])
    const committed = latest?.seq ?? 0
    const lastError = this.#checkpointer.lastError
    return {
      store: { location: this.#backend.location, reachable: true, healthy: this.#writerHealthy() },
      lastCommit: latest === undefined ? null : { seq: latest.seq, timestamp: latest.timestamp },
      treeSize,
      pendingLeaves: committed - treeSize,
      lastCheckpoint: checkpoint === undefined ? null : { treeSize: checkpoint.tree_size, rootHash: checkpoint.root_hash, timestamp: checkpoint.timestamp, signerKey: checkpoint.signer_key },
      checkpointCount,
      uncheckpointedReceipts: committed - (checkpoint?.tree_size ?? 0),
      logId: await this.#backend.logId(),
      lastError: lastError === undefined ? null : lastError.message,
    }
  }

  /** The inclusion proof of `receiptId` in the checkpoint of `treeSize` (default: the newest). */
  async inclusionProof(receiptId: string, treeSize?: number): Promise<InclusionProofRecord> {
    const seq = await this.#findSeq(receiptId)
    if (seq === undefined) throw new NotFoundError(`receipt ${receiptId}`)
    const checkpoint = treeSize === undefined ? await this.#backend.latestCheckpoint() : await this.#backend.checkpoint(treeSize)
    if (checkpoint === undefined) {
      if (treeSize !== undefined) throw new NotFoundError(`checkpoint of tree size ${treeSize}`)
      throw new NotCheckpointedError(receiptId, 'the log has no checkpoint yet')
    }
    const index = seq - 1
    if (index >= checkpoint.tree_size) throw new NotCheckpointedError(receiptId, `it is leaf ${index}, the checkpoint covers ${checkpoint.tree_size} leaves`)
    const record = createInclusionProofRecord(receiptId, index, await inclusionProof(index, checkpoint.tree_size, this.#backend), checkpoint)
    const check = verifyInclusionProofRecord(record, { trustedKeys: [], allowUntrusted: true, receiptId })
    if (!check.ok) throw new LogIntegrityError(`the proof of receipt ${receiptId} against checkpoint ${checkpoint.tree_size} does not verify (${check.reason})`)
    return record
  }

  /** The consistency proof between the checkpoints of sizes `first` and `second`. */
  async consistencyProof(first: number, second: number): Promise<ConsistencyProofRecord> {
    // an empty first tree is a prefix of every tree and proves nothing (RFC 9162 2.1.4)
    if (first < 1) throw new BadRequestError(`first must be at least 1, got ${first}`)
    if (first > second) throw new BadRequestError(`first (${first}) must not exceed second (${second})`)
    const [a, b] = await Promise.all([this.#backend.checkpoint(first), this.#backend.checkpoint(second)])
    if (a === undefined) throw new NotFoundError(`checkpoint of tree size ${first}`)
    if (b === undefined) throw new NotFoundError(`checkpoint of tree size ${second}`)
    const record = createConsistencyProofRecord(a, b, await consistencyProof(first, second, this.#backend))
    const check = verifyConsistencyProofRecord(record, { trustedKeys: [], allowUntrusted: true })
    if (!check.ok) throw new LogIntegrityError(`checkpoints ${first} and ${second} are not consistent (${check.reason})`)
    return record
  }

  checkpoint(treeSize: number): Promise<CheckpointStatement | undefined> {
    return this.#backend.checkpoint(treeSize)
  }

  checkpoints(afterSize: number, limit: number): Promise<CheckpointStatement[]> {
    return this.#backend.checkpoints(afterSize, limit)
  }

  /** Commits, catches up and checkpoints within `timeoutMs` (`gate receipt flush`, POST /v1/checkpoints). */
  flush(timeoutMs: number): Promise<CheckpointResult> {
    return this.#checkpointer.flush(timeoutMs)
  }

  /** Stops the checkpointer and closes the backend. */
  async close(): Promise<void> {
    await this.#checkpointer.stop()
    await this.#backend.close()
  }
}
