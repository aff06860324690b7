// The receipt ingest sidecars ship to (POST /v1/receipts/ingest, routes/ingest.ts), over either backend:
// receipts signed by enrolled keys (or the authority's own) become receipt rows, idempotent by receipt
// id. On PostgreSQL the receipt log itself skips ids already stored, inside its serialized append; on
// SQLite (one process) ingests run one at a time and skip the ids `findStored` finds (a filter of stored
// ids rules most out without a lookup).
import type { AuthorityPort, EnrolledSigner, IngestItem, ReceiptIngestPort } from '../ports.js'
import type { EnrolledKeyStore, TrustStores } from '../store-ports.js'
import { createCoreReceiptRow, createReceiptRow } from '../stores/receipt-row.js'

/** Options of `createIngestPort`. */
export interface IngestPortOptions {
  stores: Pick<TrustStores, 'receipts'>
  enrolledKeys: EnrolledKeyStore
  /** Its trusted keys are accepted signers too (a sidecar signing with the authority's seed file). */
  authority: Pick<AuthorityPort, 'status'>
  /** True when the receipt log refuses an id it already holds (PostgreSQL); else ingests check first. */
  appendSkipsDuplicates: boolean
}

export function createIngestPort(options: IngestPortOptions): ReceiptIngestPort {
  const { stores, enrolledKeys, authority } = options
  const { log, query } = stores.receipts
  // Enrolled keys are read once and again on a miss (another node may have enrolled one since).
  let known: Promise<Set<string>> | undefined
  const load = async () => new Set((await enrolledKeys.list()).map(k => k.publicKey))
  let tail: Promise<unknown> = Promise.resolve()
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => undefined)
    return run
  }
  const rowOf = (item: IngestItem) => {
    const context = {
      tenant: item.tenant,
      subjectKey: item.subjectKey,
      costUnits: item.costUnits,
      costCurrency: item.costCurrency,
      attemptedCostUnits: item.attemptedCostUnits,
      kind: item.kind,
      decisionReceiptId: item.decisionReceiptId,
    }
    return item.form === 'http' ? createReceiptRow(item.receipt, item.json, context) : createCoreReceiptRow(item.receipt, item.json, { ...context, requestId: item.requestId })
  }
  return {
    async acceptedSigners(keys) {
      const trusted = new Set(authority.status().trustedPublicKeys)
      known ??= load()
      let enrolled: Set<string>
      try {
        enrolled = await known
        if (keys.some(k => !trusted.has(k) && !enrolled.has(k))) {
          known = load()
          enrolled = await known
        }
      } catch (err) {
        known = undefined
        throw err
      }
      return new Set(keys.filter(k => trusted.has(k) || enrolled.has(k)))
    },
    async ingest(items) {
      if (options.appendSkipsDuplicates) {
        const results = await log.appendMany(items.map(rowOf))
        return results.map(r => ({ seq: r.seq, stored: r.stored !== false }))
      }
      return serial(async () => {
        const results: { seq: number; stored: boolean }[] = []
        const fresh: { index: number; item: IngestItem }[] = []
        const seen = new Map<string, number>()
        const stored = await query.findStored(items.map(item => item.receipt.id))
        for (const [index, item] of items.entries()) {
          const seq = stored.get(item.receipt.id)
          if (seq !== undefined) results[index] = { seq, stored: false }
          else if (seen.has(item.receipt.id)) results[index] = { seq: -1, stored: false }
          else {
            seen.set(item.receipt.id, index)
            fresh.push({ index, item })
          }
        }
        const appended = await log.appendMany(fresh.map(f => rowOf(f.item)))
        fresh.forEach((f, k) => (results[f.index] = { seq: appended[k]!.seq, stored: true }))
        // a receipt twice in one batch: the copy answers the first one's seq
        items.forEach((item, index) => {
          if (results[index]!.seq === -1) results[index] = { seq: results[seen.get(item.receipt.id)!]!.seq, stored: false }
        })
        return results
      })
    },
    async enroll(publicKey, label) {
      const enrolled = await enrolledKeys.enroll(publicKey, label)
      known = undefined
      return enrolled
    },
    enrolled: (): Promise<EnrolledSigner[]> => enrolledKeys.list(),
  }
}
