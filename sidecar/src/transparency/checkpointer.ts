// The checkpointer: a follower of the receipt writer. After each commit the writer calls `onCommitted()`
// (one call site, app/transparency-wiring.ts); the checkpointer then catches up on its own: it reads
// receipt ids in seq order after the last leaf its tree has, appends them to a compact-frontier tree
// (sdk transparency), stores the perfect subtrees that completes, and signs a checkpoint statement every
// `everyReceipts` new leaves or every `intervalMs` when the log grew. Nothing runs on the request path:
// wake-ups are gathered (`gatherMs`) so one pass handles many commits.
//
// Several processes may grow the same file's tree (a sidecar, and `gate receipt checkpoint create` run
// beside it): each append is compare-and-set on the stored size, and a process that loses reloads the
// frontier from the stored nodes and carries on. A receipt seq that does not follow the last leaf (a row
// missing from the table) stops the tree there: it is reported (health, `lastError`), never skipped. So
// does a row another process appended whose stored receipt does not verify (leaf-check.ts): the authority
// signs no checkpoint over what it has not verified.
import { rename, writeFile } from 'node:fs/promises'
import {
  bytesToHex,
  CompactMerkleTree,
  frontierRefs,
  receiptLeafHash,
  signCheckpointStatement,
  statementHash,
  type CheckpointStatement,
  type Signer,
  type TreeNode,
} from '@gate/sdk'
import type { StoredReceiptStep } from '@gate/trust'
import { FlushTimeoutError, LogIntegrityError } from '../errors.js'
import { LeafCheck, type AcceptedSigners } from './leaf-check.js'
import type { CommittedReceipts, TransparencyLogBackend } from '@gate/trust'

/** Options of `Checkpointer`. */
export interface CheckpointerOptions {
  backend: TransparencyLogBackend
  /** The authority signer (read at every checkpoint: it changes on rotation). */
  signer: () => Signer
  /**
   * Of the keys that signed rows another process appended, those the log accepts (the authority's
   * trusted keys, keys enrolled for ingest, this process's own): a row signed by any other is refused.
   */
  acceptedSigners: AcceptedSigners
  /** Called once per row refused as a leaf (the metric), with the step it failed. */
  onUnverified?: (step: StoredReceiptStep) => void
  /** Sign a checkpoint once this many leaves were added since the last one; 0 turns the count off. Default 1000. */
  everyReceipts?: number
  /** Sign a checkpoint this often when the log grew; 0 turns the timer off. Default 30000 ms. */
  intervalMs?: number
  /** After a commit notification, wait this long before reading, default 100 ms. */
  gatherMs?: number
  /** Also look for receipts committed by another process this often; 0 (default) for notifications only. */
  pollIntervalMs?: number
  /** Also write each new checkpoint statement here (atomically): a copy kept outside the receipt file. */
  copyPath?: string
  /** Commits what the in-process writer still holds (flush); default: nothing to commit. */
  flushReceipts?: () => Promise<void>
  /** Called with each checkpoint this checkpointer signs. */
  onCheckpoint?: (statement: CheckpointStatement) => void
  /** Unix seconds. */
  now?: () => number
  log?: (line: string) => void
}

/** Defaults of `CheckpointerOptions`. */
export const CHECKPOINTER_DEFAULTS = Object.freeze({ everyReceipts: 1000, intervalMs: 30_000, gatherMs: 100, pollIntervalMs: 0 })

// receipts read per catch-up step
const CATCH_UP_BATCH = 2048

/** The result of a checkpoint request: the newest checkpoint, and whether this call signed it. */
export interface CheckpointResult {
  checkpoint: CheckpointStatement | undefined
  created: boolean
}

export class Checkpointer {
  readonly #backend: TransparencyLogBackend
  readonly #signer: () => Signer
  readonly #everyReceipts: number
  readonly #intervalMs: number
  readonly #gatherMs: number
  readonly #pollIntervalMs: number
  readonly #copyPath: string | undefined
  readonly #flushReceipts: () => Promise<void>
  readonly #now: () => number
  readonly #log: (line: string) => void
  readonly #onCheckpoint: (statement: CheckpointStatement) => void
  readonly #leaves: LeafCheck
  readonly #onUnverified: (step: StoredReceiptStep) => void
  /** The seq last refused as a leaf: a log stopped at one row retries it on every pass, counted once. */
  #refusedSeq = 0
  #tree: CompactMerkleTree | undefined
  #logId = ''
  #lastCheckpointSize = -1
  #tail: Promise<unknown> = Promise.resolve()
  #gatherTimer: NodeJS.Timeout | undefined
  #interval: NodeJS.Timeout | undefined
  #poll: NodeJS.Timeout | undefined
  #stopped = false
  /** The last failure of a background pass (cleared by the next success). */
  lastError: Error | undefined

  constructor(options: CheckpointerOptions) {
    this.#backend = options.backend
    this.#signer = options.signer
    this.#everyReceipts = options.everyReceipts ?? CHECKPOINTER_DEFAULTS.everyReceipts
    this.#intervalMs = options.intervalMs ?? CHECKPOINTER_DEFAULTS.intervalMs
    this.#gatherMs = options.gatherMs ?? CHECKPOINTER_DEFAULTS.gatherMs
    this.#pollIntervalMs = options.pollIntervalMs ?? CHECKPOINTER_DEFAULTS.pollIntervalMs
    this.#copyPath = options.copyPath
    this.#flushReceipts = options.flushReceipts ?? (async () => undefined)
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
    this.#log = options.log ?? (() => undefined)
    this.#onCheckpoint = options.onCheckpoint ?? (() => undefined)
    this.#leaves = new LeafCheck(options.backend, options.acceptedSigners)
    this.#onUnverified = options.onUnverified ?? (() => undefined)
  }

  /** Starts the interval timer and catches up once with what is already committed. */
  start(): void {
    if (this.#intervalMs > 0) {
      this.#interval = setInterval(() => this.#background(true), this.#intervalMs)
      this.#interval.unref()
    }
    if (this.#pollIntervalMs > 0) {
      this.#poll = setInterval(() => this.onCommitted(), this.#pollIntervalMs)
      this.#poll.unref()
    }
    this.#background(false)
  }

  /**
   * The follower entry point: this process committed the batch (omitted: something was committed,
   * by someone); the tree catches up shortly, reading the ids itself. A batch's rows are taken as
   * leaves without a check: this process signed them, or verified them at ingest.
   */
  onCommitted(committed?: Pick<CommittedReceipts, 'firstSeq' | 'lastSeq' | 'receiptIds'>): void {
    if (committed !== undefined && (this.#tree === undefined || committed.lastSeq > this.#tree.size)) this.#leaves.committed(committed)
    if (this.#stopped || this.#gatherTimer !== undefined) return
    if (committed !== undefined && this.#tree !== undefined && committed.lastSeq <= this.#tree.size) return
    this.#gatherTimer = setTimeout(() => {
      this.#gatherTimer = undefined
      this.#background(false)
    }, this.#gatherMs)
    this.#gatherTimer.unref()
  }

  /** Adds every committed receipt to the tree; resolves with the tree size. */
  catchUp(): Promise<number> {
    return this.#exclusive(() => this.#catchUp())
  }

  /** Catches up, then signs a checkpoint of the whole tree unless the newest one already covers it. */
  createCheckpoint(): Promise<CheckpointResult> {
    return this.#exclusive(async () => {
      await this.#catchUp()
      return this.#checkpoint()
    })
  }

  /** Commits what the writer holds, then catches up and checkpoints, within `timeoutMs`. */
  async flush(timeoutMs: number): Promise<CheckpointResult> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new FlushTimeoutError(timeoutMs)), timeoutMs)
    })
    try {
      return await Promise.race([this.#flushReceipts().then(() => this.createCheckpoint()), timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Stops the timers and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#gatherTimer)
    clearInterval(this.#interval)
    clearInterval(this.#poll)
    await this.#tail.catch(() => undefined)
  }

  #background(onTimer: boolean): void {
    if (this.#stopped) return
    this.#exclusive(async () => {
      const size = await this.#catchUp()
      if (onTimer && size > Math.max(this.#lastCheckpointSize, 0)) await this.#checkpoint()
      this.lastError = undefined
    }).catch(err => {
      if (this.lastError?.message !== (err as Error).message) this.#log(`transparency log: ${(err as Error).message}`)
      this.lastError = err as Error
    })
  }

  // Adds committed receipts to the tree, signing a checkpoint at each multiple of `everyReceipts` on
  // the way (so checkpoint sizes are predictable: N, 2N, 3N, ...).
  async #catchUp(): Promise<number> {
    let tree = await this.#loadTree()
    const every = this.#everyReceipts
    for (;;) {
      this.#leaves.covered(tree.size)
      const read = await this.#backend.receiptsAfter(tree.size, CATCH_UP_BATCH)
      if (read.length === 0) return tree.size
      const { rows, refusal } = await this.#leaves.check(read)
      if (refusal !== undefined && refusal.seq !== this.#refusedSeq) {
        this.#refusedSeq = refusal.seq
        this.#onUnverified(refusal.step)
      }
      // what verified is stored first; the refusal is reported on the next read, when it leads the batch
      if (rows.length === 0) {
        throw new LogIntegrityError(`receipt seq ${refusal!.seq} (${refusal!.receiptId}) does not verify (${refusal!.step}: ${refusal!.detail}): it is not added to the log, which stops before it`)
      }
      let start = tree.size
      let nodes: TreeNode[] = []
      let lost = false
      for (const [k, row] of rows.entries()) {
        if (row.seq !== tree.size + 1) {
          if (k > 0) break // store what was contiguous, then report the gap on the next read
          throw new LogIntegrityError(`receipt seq ${row.seq} follows leaf ${tree.size - 1} (seq ${tree.size}): receipts are missing`)
        }
        tree.append(receiptLeafHash(row.receiptId), node => nodes.push(node))
        if (every > 0 && tree.size % every === 0 && tree.size > this.#lastCheckpointSize) {
          if (!(await this.#store(start, tree.size, nodes))) {
            lost = true
            break
          }
          await this.#checkpoint()
          start = tree.size
          nodes = []
        }
      }
      // a lost race (another process grew the stored tree) reloads the tree from what it stored
      if (!lost && nodes.length > 0) await this.#store(start, tree.size, nodes)
      tree = await this.#loadTree()
    }
  }

  // Stores the nodes of leaves [start, size); false (and the tree dropped) when another process moved the stored tree.
  async #store(start: number, size: number, nodes: readonly TreeNode[]): Promise<boolean> {
    let stored: boolean
    try {
      stored = await this.#backend.appendNodes(start, size, nodes)
    } catch (err) {
      this.#tree = undefined // the frontier ran ahead of what was stored
      throw err
    }
    if (!stored) this.#tree = undefined
    return stored
  }

  async #checkpoint(): Promise<CheckpointResult> {
    const tree = await this.#loadTree()
    const size = tree.size
    const root = bytesToHex(tree.root())
    const result = await this.#backend.addCheckpoint(latest => {
      if (latest !== undefined && latest.tree_size >= size) return undefined
      return signCheckpointStatement(
        { log_id: this.#logId, tree_size: size, root_hash: root, timestamp: this.#now(), chain_root: latest === undefined ? undefined : statementHash(latest) },
        this.#signer(),
      )
    })
    this.#lastCheckpointSize = result.checkpoint?.tree_size ?? -1
    if (result.created) {
      if (this.#copyPath !== undefined) await writeCopy(this.#copyPath, result.checkpoint!)
      this.#onCheckpoint(result.checkpoint!)
    }
    return result
  }

  async #loadTree(): Promise<CompactMerkleTree> {
    if (this.#tree !== undefined) return this.#tree
    this.#logId = await this.#backend.logId()
    const size = await this.#backend.treeSize()
    this.#tree = new CompactMerkleTree(size, await this.#backend.nodes(frontierRefs(size)))
    if (this.#lastCheckpointSize < 0) this.#lastCheckpointSize = (await this.#backend.latestCheckpoint())?.tree_size ?? -1
    return this.#tree
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn)
    this.#tail = run.catch(() => undefined)
    return run
  }
}

// write-then-rename, so a reader never sees half a statement
async function writeCopy(path: string, statement: CheckpointStatement): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`
  await writeFile(tmp, JSON.stringify(statement, null, 2) + '\n', { mode: 0o644 })
  await rename(tmp, path)
}
