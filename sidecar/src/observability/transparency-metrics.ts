// Gauges of the transparency log (docs/transparency.md), read from its status at scrape time: how far
// the Merkle tree and the signed checkpoints trail the committed receipts, the checkpointer's health,
// and the receipt outbox's backlog where one exists. Never computed on the request path.
import { Gauge, type Registry } from 'prom-client'
import type { TransparencyStatus } from '@gate/trust'

/**
 * Registers the gauges on `registry`; `status` is called at most once per scrape. The outbox gauges
 * exist only when the log has an outbox (read once here).
 */
export async function registerTransparencyMetrics(registry: Registry, status: () => Promise<TransparencyStatus>): Promise<void> {
  const read = oncePerScrape(status)
  const gauge = (name: string, help: string, value: (s: TransparencyStatus) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(value(await read()))
      },
    })
  gauge('gate_transparency_tree_size', 'Receipts the Merkle tree covers.', s => s.treeSize)
  gauge('gate_transparency_pending_leaves', 'Committed receipts not in the tree yet.', s => s.pendingLeaves)
  gauge('gate_transparency_uncheckpointed_receipts', 'Committed receipts the newest signed checkpoint does not cover.', s => s.uncheckpointedReceipts)
  gauge('gate_transparency_last_checkpoint_timestamp_seconds', 'Unix time of the newest signed checkpoint (0 before the first).', s => s.lastCheckpoint?.timestamp ?? 0)
  gauge('gate_transparency_healthy', "1 when the checkpointer's last pass succeeded, else 0.", s => (s.lastError === null ? 1 : 0))
  if ((await status()).outbox === null) return
  gauge('gate_receipt_outbox_pending', 'Receipts waiting in the outbox.', s => s.outbox?.pending ?? 0)
  gauge('gate_receipt_outbox_oldest_age_seconds', 'Age of the oldest receipt waiting in the outbox (0 when empty).', s => s.outbox?.oldestAgeSeconds ?? 0)
}

// The gauges of one scrape share one status read (a few SQLite reads); the next scrape reads again.
function oncePerScrape<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined
  return () => {
    if (pending === undefined) {
      pending = load()
      const clear = () => setImmediate(() => (pending = undefined))
      pending.then(clear, clear)
    }
    return pending
  }
}
