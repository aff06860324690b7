// The transparency log's checkpointer as the receipt writer thread runs it (receipt-writer-thread.ts),
// so the tree and the checkpoints are built off the event loop on both drivers (on node:sqlite every
// statement of the tree ran on the event loop; on sqlite3 its hashing and row handling did). It is the
// same Checkpointer (transparency/checkpointer.ts) over the thread's own connection: it hears of the
// thread's commits at once and of the event loop's inline commits by message, and its writes never
// wait for a receipt commit nor make one wait (the thread runs them in turn; against the event loop's
// inline commits, the write lock decides, write-lock.ts).
import type { Signer } from '@gate/sdk'
import type { CommittedReceipts, TransparencyLogBackend } from '@gate/trust'
import type { CheckpointResult } from '../transparency/checkpointer.js'
import { Checkpointer } from '../transparency/checkpointer.js'
import type { HostedCheckpointerSettings, LeafHooks } from '../transparency/checkpointer-control.js'
import type { SqliteDatabase } from './sqlite-driver.js'
import { attachTransparencyLog } from './transparency-log-store.js'
import type { WriterThreadLock } from './write-lock.js'

/** How often the thread tells the event loop whether the checkpointer's last pass failed. */
const ERROR_REPORT_MS = 250

export interface HostedCheckpointer {
  /** A batch was committed by this process (this thread or the event loop): its rows are leaves without a check. */
  onCommitted(batch: CommittedReceipts): void
  createCheckpoint(): Promise<CheckpointResult>
  stop(): Promise<void>
}

export interface HostCheckpointerOptions extends LeafHooks {
  db: SqliteDatabase
  signer: Signer
  settings: HostedCheckpointerSettings
  /** The thread's side of the write lock (write-lock.ts), shared with its receipt commits. */
  lock: WriterThreadLock
  log: (line: string) => void
  /** Told when the last pass's failure changes: its message, or null once a pass succeeds. */
  reportError: (message: string | null) => void
}

/** Starts the checkpointer on this thread's connection; it catches up at once with what is committed. */
export async function hostCheckpointer(options: HostCheckpointerOptions): Promise<HostedCheckpointer> {
  const store = await attachTransparencyLog(options.db)
  const { lock } = options
  // the writes take the write lock; reads need none (WAL readers never wait for a writer)
  const backend: TransparencyLogBackend = {
    location: store.location,
    logId: () => store.logId(),
    treeSize: () => store.treeSize(),
    latestReceipt: () => store.latestReceipt(),
    receiptsAfter: (afterSeq, limit) => store.receiptsAfter(afterSeq, limit),
    auditedReceiptsAfter: (afterSeq, limit) => store.auditedReceiptsAfter(afterSeq, limit),
    leafHashesFrom: (fromIndex, limit) => store.leafHashesFrom(fromIndex, limit),
    appendNodes: (expectedSize, newSize, nodes) => lock.run(() => store.appendNodes(expectedSize, newSize, nodes)),
    nodes: refs => store.nodes(refs),
    addCheckpoint: build => lock.run(() => store.addCheckpoint(build)),
    latestCheckpoint: () => store.latestCheckpoint(),
    checkpoint: treeSize => store.checkpoint(treeSize),
    checkpoints: (afterSize, limit) => store.checkpoints(afterSize, limit),
    checkpointCount: () => store.checkpointCount(),
    // the connection is the writer thread's; it closes it
    close: async () => undefined,
  }
  const checkpointer = new Checkpointer({
    backend,
    signer: () => options.signer,
    everyReceipts: options.settings.everyReceipts,
    intervalMs: options.settings.intervalMs,
    pollIntervalMs: options.settings.pollIntervalMs,
    copyPath: options.settings.copyPath,
    acceptedSigners: options.acceptedSigners,
    onUnverified: options.onUnverified,
    log: options.log,
  })
  let reported: string | null = null
  const report = setInterval(() => {
    const now = checkpointer.lastError?.message ?? null
    if (now === reported) return
    reported = now
    options.reportError(now)
  }, ERROR_REPORT_MS)
  report.unref()
  checkpointer.start()
  return {
    onCommitted: batch => checkpointer.onCommitted(batch),
    createCheckpoint: () => checkpointer.createCheckpoint(),
    async stop() {
      clearInterval(report)
      await checkpointer.stop()
    },
  }
}
