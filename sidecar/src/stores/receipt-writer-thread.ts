// The receipt writer thread's entry point (threaded-receipt-writer.ts): the authority signer and a
// write connection to the receipt file. The batches that arrived while the previous one was committing
// are committed together, in one transaction (receipt-log.ts appendRows), and each is answered after
// that COMMIT with its signed receipts and seqs. Nothing else runs here.
import { parentPort, workerData } from 'node:worker_threads'
import { createSignerFromKeyBytes, signCoreReceiptJson, signHttpReceiptJson } from '@gate/sdk'
import type { ThreadReady } from '../worker-threads.js'
import { appendRows, createCoreReceiptRow, createReceiptRow, rowValues, type ReceiptRow } from './receipt-log.js'
import { bindCoreReceiptContext, bindReceiptContext } from './receipt-columns.js'
import { openDatabase, type DatabaseOptions } from './sqlite-driver.js'
import type { WriterAnswer, WriterRequest, WriterResult } from './threaded-receipt-writer.js'

type Batch = Exclude<WriterRequest, 'close'>

const { path, database, seed } = workerData as { path: string; database: DatabaseOptions; seed: Uint8Array }

try {
  // `seed` is the authority key as stores keep it (signingKeyBytes): it names its own algorithm
  const signer = createSignerFromKeyBytes(seed)
  const db = await openDatabase(path, database, { store: 'receipts (writer thread)' })
  let pending: Batch[] = []
  let writing: Promise<void> | undefined
  let closing = false

  const commit = async (batches: Batch[]): Promise<void> => {
    const rows: unknown[][] = []
    const answers = batches.map(batch => {
      const ids: string[] = []
      const results = batch.items.map((item): WriterResult => {
        let signed
        let row: ReceiptRow
        try {
          if (item.form === 'http') {
            // as the inline writer: the row's tenant and subject are signed too (receipt-columns.ts)
            signed = signHttpReceiptJson(bindReceiptContext(item.body, item.context), signer)
            row = createReceiptRow(signed.receipt, signed.json, item.context)
          } else {
            signed = signCoreReceiptJson(bindCoreReceiptContext(item.body, item.context) as unknown as Record<string, unknown>, signer)
            row = createCoreReceiptRow(signed.receipt, signed.json, item.context)
          }
        } catch (err) {
          return { error: (err as Error).message, code: 'gate_receipt_sign_failed' }
        }
        try {
          rows.push(rowValues(row))
        } catch (err) {
          return { error: (err as Error).message, code: 'gate_receipt_persistence_failed' }
        }
        ids.push(signed.receipt.id)
        return { ...signed, seq: 0 }
      })
      return { id: batch.id, results, ids }
    })
    let lastSeq: number
    try {
      lastSeq = rows.length === 0 ? 0 : await appendRows(db, rows)
    } catch (err) {
      for (const batch of batches) parentPort!.postMessage({ id: batch.id, error: (err as Error).message } satisfies WriterAnswer)
      return
    }
    // the rows took the seqs before lastSeq in order; each batch reports its own slice to the followers
    let seq = lastSeq - rows.length
    for (const { id, results, ids } of answers) {
      const firstSeq = seq + 1
      for (const result of results) if (!('error' in result)) result.seq = ++seq
      const committed = ids.length === 0 ? undefined : { firstSeq, lastSeq: seq, receiptIds: ids }
      parentPort!.postMessage({ id, results, committed } satisfies WriterAnswer)
    }
  }

  const drain = async (): Promise<void> => {
    try {
      while (pending.length > 0) {
        const batches = pending
        pending = []
        await commit(batches)
      }
    } finally {
      writing = undefined
    }
    if (closing) await shutdown()
  }

  const shutdown = async (): Promise<void> => {
    await db.close().catch(() => undefined)
    parentPort!.close()
  }

  parentPort!.on('message', (request: WriterRequest) => {
    if (request === 'close') {
      closing = true
      if (writing === undefined) void shutdown()
      return
    }
    pending.push(request)
    // batches arriving in the same turn, or while a commit is under way, share the next transaction
    writing ??= new Promise<void>(resolve => setImmediate(resolve)).then(drain)
  })
  parentPort!.postMessage({ ready: true } satisfies ThreadReady)
} catch (err) {
  parentPort!.postMessage({ ready: false, error: (err as Error).message } satisfies ThreadReady)
}
