// Gauges of the transparency log (docs/transparency.md), read from its status at scrape time: how far
// the Merkle tree and the signed checkpoints trail the committed receipts, the checkpointer's health,
// and the checkpointer's health. Never computed on the request path. (A fleet's receipt outbox has its
// own gauges: fleet-metrics.ts.)
import { Gauge, type Registry } from 'prom-client'
import type { TransparencyStatus } from '@gate/trust'

/** Registers the gauges on `registry`; `status` is called at most once per scrape. */
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
