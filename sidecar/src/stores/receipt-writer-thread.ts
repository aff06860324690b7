// The receipt writer thread's entry point (threaded-receipt-writer.ts): the authority signer and a
// write connection to the receipt file. Each batch is signed as it arrives; whatever was signed while
// the previous transaction was committing is committed together in the next one (receipt-log.ts
// appendRows), and each batch is answered after that COMMIT with its receipts' ids, signatures, stored
// JSON and seqs. It also checkpoints the WAL for the commits the event loop made itself (the writer's
// inline path), whose connection leaves that to this thread, and, when asked, hosts the transparency
// log's checkpointer (hosted-checkpointer.ts), which follows every commit.
//
// Signing on arrival: on `sqlite3` a commit runs on libuv's pool, and this thread used to sit idle
// through it with the next batches unsigned; now their signatures overlap the commit. On `node:sqlite`
// the commit runs here, so batches that arrive in one turn are signed, then committed together.
import { parentPort, workerData } from 'node:worker_threads'
import { createSignerFromKeyBytes, signCoreReceiptJson, signHttpReceiptJson, type Signer } from '@gate/sdk'
import { nameThisThread, type ThreadReady } from '../worker-threads.js'
import { hostCheckpointer, type HostedCheckpointer } from './hosted-checkpointer.js'
import { createCoreReceiptRow, createReceiptRow, rowValues, type ReceiptRow } from '@gate/trust'
import { appendRows } from './receipt-log.js'
import { bindCoreReceiptContext, bindReceiptContext } from './receipt-columns.js'
import { openDatabase, type DatabaseOptions } from './sqlite-driver.js'
import { WriterThreadLock } from './write-lock.js'
import type { WriterAnswer, WriterRequest, WriterResult } from './threaded-receipt-writer.js'

type Batch = Extract<WriterRequest, { items: unknown }>
type Control = Extract<WriterRequest, { control: string }>

/** A batch signed and waiting for its commit: one result per item, the rows of those that were signed. */
interface SignedBatch {
  id: number
  results: WriterResult[]
  rows: unknown[][]
  ids: string[]
}

const WAL_CHECKPOINT_INTERVAL_MS = 1000

const { path, database, seed, lock: sharedLock } = workerData as { path: string; database: DatabaseOptions; seed: Uint8Array; lock: Int32Array }
const lock = new WriterThreadLock(sharedLock)

nameThisThread('gate-writer')

try {
  // `seed` is the authority key as stores keep it (signingKeyBytes): it names its own algorithm
  const signer = createSignerFromKeyBytes(seed)
  const db = await openDatabase(path, database, { store: 'receipts (writer thread)' })
  let signed: SignedBatch[] = []
  let committing = false
  let scheduled = false
  let closing = false
  let hosted: HostedCheckpointer | undefined
  const post = (answer: WriterAnswer) => parentPort!.postMessage(answer)

  const commit = async (): Promise<void> => {
    committing = true
    while (signed.length > 0) {
      const batches = signed
      signed = []
      const rows: unknown[][] = []
      for (const batch of batches) for (const row of batch.rows) rows.push(row)
      let lastSeq: number
      try {
        // the event loop's inline commits and this one take turns (write-lock.ts)
        lastSeq = rows.length === 0 ? 0 : await lock.run(() => appendRows(db, rows))
      } catch (err) {
        for (const batch of batches) post({ id: batch.id, error: (err as Error).message })
        continue
      }
      // this thread signed these rows: they become leaves without a check (leaf-check.ts)
      if (rows.length > 0) hosted?.onCommitted({ firstSeq: lastSeq - rows.length + 1, lastSeq, receiptIds: batches.flatMap(batch => batch.ids) })
      // the rows took the seqs before lastSeq in order; each batch reports its own slice to the followers
      let seq = lastSeq - rows.length
      for (const { id, results, ids } of batches) {
        const firstSeq = seq + 1
        for (const result of results) if (!('error' in result)) result.seq = ++seq
        const committed = ids.length === 0 ? undefined : { firstSeq, lastSeq: seq, receiptIds: ids }
        post({ id, results, committed })
      }
    }
    committing = false
    if (closing) await shutdown()
  }

  const shutdown = async (): Promise<void> => {
    await hosted?.stop().catch(() => undefined)
    await db.close().catch(() => undefined)
    parentPort!.close()
  }

  // The event loop's inline commits do not checkpoint the WAL (threaded-receipt-writer.ts): once a
  // second, when another connection committed (data_version moved), a passive checkpoint copies what
  // they appended, never waiting for a writer. This thread's own commits checkpoint as usual.
  let dataVersion = -1
  const checkpointTimer = setInterval(() => {
    if (committing) return
    void (async () => {
      const version = (await db.get<{ data_version: number }>('PRAGMA data_version'))?.data_version ?? -1
      if (version === dataVersion) return
      dataVersion = version
      await db.exec('PRAGMA wal_checkpoint(PASSIVE)')
    })().catch(() => undefined)
  }, WAL_CHECKPOINT_INTERVAL_MS)
  checkpointTimer.unref()

  // Which signers of rows another process appended the log accepts is the event loop's to say (its
  // authority's trusted keys): asked by message, answered by number.
  const asks = new Map<number, { resolve: (keys: ReadonlySet<string>) => void; reject: (err: Error) => void }>()
  let nextAsk = 1
  const acceptedSigners = (keys: readonly string[]): Promise<ReadonlySet<string>> =>
    new Promise((resolve, reject) => {
      const ask = nextAsk++
      asks.set(ask, { resolve, reject })
      post({ askSigners: ask, keys: [...keys] })
    })

  const control = async (request: Control): Promise<unknown> => {
    switch (request.control) {
      case 'startCheckpointer':
        hosted ??= await hostCheckpointer({
          db,
          signer,
          settings: request.settings,
          lock,
          acceptedSigners,
          onUnverified: step => post({ unverified: step }),
          log: line => post({ log: line }),
          reportError: message => post({ checkpointerError: message }),
        })
        return undefined
      case 'createCheckpoint':
        if (hosted === undefined) throw new Error('no checkpointer runs on the receipt writer thread')
        return hosted.createCheckpoint()
      case 'stopCheckpointer':
        await hosted?.stop()
        hosted = undefined
        return undefined
    }
  }

  parentPort!.on('message', (request: WriterRequest) => {
    if (request === 'close') {
      clearInterval(checkpointTimer)
      closing = true
      if (!committing && !scheduled) void shutdown()
      return
    }
    if ('committed' in request) {
      for (const batch of request.committed) hosted?.onCommitted(batch)
      return
    }
    if ('signers' in request) {
      const waiting = asks.get(request.signers)
      asks.delete(request.signers)
      if (request.error === undefined) waiting?.resolve(new Set(request.keys))
      else waiting?.reject(new Error(request.error))
      return
    }
    if ('control' in request) {
      control(request).then(
        result => post({ call: request.call, result }),
        err => post({ call: request.call, error: (err as Error).message }),
      )
      return
    }
    signed.push(signBatch(request, signer))
    // a commit under way takes this batch next; else the batches of this turn share one transaction
    if (committing || scheduled) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      void commit()
    })
  })
  parentPort!.postMessage({ ready: true } satisfies ThreadReady)
} catch (err) {
  parentPort!.postMessage({ ready: false, error: (err as Error).message } satisfies ThreadReady)
}

// An HTTP receipt is answered with its id and signature (the event loop rebuilds the object from the
// body it sent, signedHttpReceipt): a message of a few strings instead of a copy of the whole receipt.
function signBatch(batch: Batch, signer: Signer): SignedBatch {
  const rows: unknown[][] = []
  const ids: string[] = []
  const results = batch.items.map((item): WriterResult => {
    let result: WriterResult
    let row: ReceiptRow
    try {
      if (item.form === 'http') {
        // the row's tenant and subject are signed too (receipt-columns.ts); the event loop binds the same
        const { receipt, json } = signHttpReceiptJson(bindReceiptContext(item.body, item.context), signer)
        row = createReceiptRow(receipt, json, item.context)
        result = { form: 'http', id: receipt.id, signature: receipt.signature, json, seq: 0 }
      } else {
        const { receipt, json } = signCoreReceiptJson(bindCoreReceiptContext(item.body, item.context) as unknown as Record<string, unknown>, signer)
        row = createCoreReceiptRow(receipt, json, item.context)
        result = { form: 'core', receipt, json, seq: 0 }
      }
    } catch (err) {
      return { error: (err as Error).message, code: 'gate_receipt_sign_failed' }
    }
    try {
      rows.push(rowValues(row))
    } catch (err) {
      return { error: (err as Error).message, code: 'gate_receipt_persistence_failed' }
    }
    ids.push(row.receiptId)
    return result
  })
  return { id: batch.id, results, rows, ids }
}
