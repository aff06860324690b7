// Starts the transparency log beside a receipt store: the SQLite backend in the receipt file, the
// checkpointer following the writer, and the proof service trust-control mounts. Undefined where
// receipts are kept in memory (nothing outlives the process to be audited) or the log is switched off.
import type { Signer } from '@gate/sdk'
import type { TransparencySettings } from '../config/transparency-flags.js'
import { openTransparencyLogStore, type Stores } from '../stores/index.js'
import { Checkpointer } from '../transparency/checkpointer.js'
import { TransparencyLog } from '../transparency/transparency-log.js'

export interface StartTransparencyLogOptions {
  stores: Stores
  settings: TransparencySettings
  /** The authority signer (read at every checkpoint). */
  signer: () => Signer
  /** Also look for receipts another process committed this often (trust serve beside a sidecar); default 0. */
  pollIntervalMs?: number
  log: (line: string) => void
}

export async function startTransparencyLog(options: StartTransparencyLogOptions): Promise<TransparencyLog | undefined> {
  const { stores, settings } = options
  if (!settings.enabled || stores.receipts.isEphemeral) return undefined
  const backend = await openTransparencyLogStore(stores.paths.receipts)
  const checkpointer = new Checkpointer({
    backend,
    signer: options.signer,
    everyReceipts: settings.everyReceipts,
    intervalMs: settings.intervalMs,
    pollIntervalMs: options.pollIntervalMs,
    copyPath: settings.copyPath,
    flushReceipts: () => stores.receipts.flush(),
    log: options.log,
  })
  // The follower hook: the one call after each commit (moves onto ReceiptWriter's follower list as is).
  stores.receipts.watchAppends(lastSeq => checkpointer.onCommitted({ lastSeq }))
  checkpointer.start()
  return new TransparencyLog({
    backend,
    checkpointer,
    findSeq: async id => (await stores.receipts.getById(id))?.seq,
    writerHealthy: () => stores.receipts.healthy,
  })
}
