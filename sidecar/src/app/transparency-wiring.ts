// Starts the transparency log beside a receipt store: its backend (SQLite: in the receipt file;
// PostgreSQL: in the trust-control database), the checkpointer following the writer, and the proof
// service trust-control mounts. Undefined where receipts are kept in memory (nothing outlives the
// process to be audited) or the log is switched off.
import type { Signer } from '@gate/sdk'
import type { StoredReceiptStep, TransparencyLogBackend, TrustReceiptStore } from '@gate/trust'
import type { TransparencySettings } from '../config/transparency-flags.js'
import { openTransparencyLogStore, type ReceiptWriter, type SqliteStores } from '../stores/index.js'
import { Checkpointer } from '../transparency/checkpointer.js'
import type { CheckpointerControl } from '../transparency/checkpointer-control.js'
import type { AcceptedSigners } from '../transparency/leaf-check.js'
import { TransparencyLog } from '../transparency/transparency-log.js'

export interface StartTransparencyLogOptions {
  /** The receipts the log covers (their point loads find a receipt's leaf). */
  receipts: Pick<TrustReceiptStore, 'isEphemeral' | 'query'>
  /** Opens the log's backend: `sqliteTransparencyBackend(stores)` or the PostgreSQL one. */
  openBackend: () => Promise<TransparencyLogBackend>
  /** The process's receipt writer: the checkpointer follows its commits (on its thread, when it has one). */
  writer: Pick<ReceiptWriter, 'onCommitted' | 'flush' | 'healthy' | 'startCheckpointer'>
  settings: TransparencySettings
  /** The authority signer (read at every checkpoint). */
  signer: () => Signer
  /** Of the keys that signed rows another process appended, those the log accepts as leaves (leaf-check.ts). */
  acceptedSigners: AcceptedSigners
  /** Called once per row refused as a leaf because it does not verify (the metric). */
  onUnverified?: (step: StoredReceiptStep) => void
  /** Also look for receipts another process committed this often (trust serve beside a sidecar); default 0. */
  pollIntervalMs?: number
  log: (line: string) => void
}

/** The SQLite backend, in the receipt file of `stores`. */
export function sqliteTransparencyBackend(stores: Pick<SqliteStores, 'paths'>): () => Promise<TransparencyLogBackend> {
  return () => openTransparencyLogStore(stores.paths.receipts)
}

export async function startTransparencyLog(options: StartTransparencyLogOptions): Promise<TransparencyLog | undefined> {
  const { receipts, settings, writer } = options
  if (!settings.enabled || receipts.isEphemeral) return undefined
  // the proofs, the checkpoints and the status are read through this backend, on this event loop
  const backend = await options.openBackend()
  const local = (): CheckpointerControl => {
    const checkpointer = new Checkpointer({
      backend,
      signer: options.signer,
      everyReceipts: settings.everyReceipts,
      intervalMs: settings.intervalMs,
      pollIntervalMs: options.pollIntervalMs,
      copyPath: settings.copyPath,
      flushReceipts: () => writer.flush(),
      acceptedSigners: options.acceptedSigners,
      onUnverified: options.onUnverified,
      log: options.log,
    })
    // The follower hook: the one call after each commit, in commit order (its rows need no check).
    writer.onCommitted(batch => checkpointer.onCommitted(batch))
    checkpointer.start()
    return checkpointer
  }
  // The tree is built off the event loop where the receipt writer has a thread (on node:sqlite every
  // statement of it ran on the event loop): the checkpointer then runs there, over that thread's
  // connection, and this process reads what it wrote.
  const hostedSettings = { everyReceipts: settings.everyReceipts, intervalMs: settings.intervalMs, copyPath: settings.copyPath, pollIntervalMs: options.pollIntervalMs }
  const checkpointer = writer.startCheckpointer === undefined ? local() : await writer.startCheckpointer(hostedSettings, local, { acceptedSigners: options.acceptedSigners, onUnverified: options.onUnverified })
  return new TransparencyLog({
    backend,
    checkpointer,
    findSeq: async id => (await receipts.query.getById(id))?.seq,
    writerHealthy: () => writer.healthy,
  })
}

/** The keys a sidecar's log accepts: its own and the authority store's (what its pinned authority trusts). */
export function trustedKeysOf(keys: () => readonly string[]): AcceptedSigners {
  return async offered => {
    const trusted = new Set(keys())
    return new Set(offered.filter(k => trusted.has(k)))
  }
}
