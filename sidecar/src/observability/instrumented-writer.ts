// A ReceiptWriter that reports to the metrics: each write's latency up to its commit, each committed
// batch's size, and each failed write as a receipt-store error. Works over either writer (inline or
// the writer thread), so the numbers mean the same whichever the service chose.
import type { ReceiptWriter } from '../stores/receipt-writer.js'
import type { GateMetrics } from './metrics.js'

export function instrumentReceiptWriter(writer: ReceiptWriter, metrics: GateMetrics): ReceiptWriter {
  writer.onCommitted(batch => metrics.recordReceiptBatch(batch.receiptIds.length))
  const failed = (err: unknown): never => {
    metrics.recordStoreError('receipts')
    throw err
  }
  // the clock starts before the call: the inline writer signs inside it
  const timed = <T>(started: number, writing: Promise<T>): Promise<T> =>
    writing.then(written => {
      metrics.recordReceiptWrite((performance.now() - started) / 1000)
      return written
    }, failed)
  return {
    write: (body, context) => timed(performance.now(), writer.write(body, context)),
    // a tool call's core receipt (gate mcp serve) counts the same as an HTTP one
    writeCore: (body, context) => timed(performance.now(), writer.writeCore(body, context)),
    onCommitted: follower => writer.onCommitted(follower),
    flush: () => writer.flush(),
    startCheckpointer: writer.startCheckpointer === undefined ? undefined : (settings, local, hooks) => writer.startCheckpointer!(settings, local, hooks),
    get healthy() {
      return writer.healthy
    },
    close: () => writer.close(),
  }
}
