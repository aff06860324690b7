// Core receipts (spec 03, gate.receipt.v1) are made when a receipt is first read (trust-control's
// query and point-load routes store what they compute), never ahead of time: most receipts are never
// read, and a conversion re-signs, costing about what the evaluation did. A key rotation is the
// exception: once the retiring seed is wiped, a row it signed can only be served in its HTTP form, so
// what it signed is converted and stored first, here. Each row is verified before it is signed
// (`toCoreJson`): one that does not verify keeps its HTTP form and is counted.
import type { Signer } from '@gate/sdk'
import { toCoreJson } from '../core-form.js'
import type { TrustReceiptStore } from '../store-ports.js'
import type { StoredReceiptStep, TrustedKeys } from '../stored-receipt-check.js'

/** What `storeCoreForms` did. */
export interface StoredCoreForms {
  stored: number
  /** Rows whose stored text does not verify against the trusted keys (they stay as they are, unsigned). */
  unverified: number
  /** Rows that verify but could not be mapped (they stay as they are). */
  invalid: number
}

/** Options of `storeCoreForms`. */
export interface StoreCoreFormsOptions {
  /** The keys a row's signer must be one of: the authority's trusted keys. */
  trustedKeys: TrustedKeys
  log?: (line: string) => void
  /** Called with the failing step of each row that does not verify (the metric). */
  onUnverified?: (failedStep: StoredReceiptStep) => void
}

const PAGE_ROWS = 512

/** Stores the core form of every committed row still without one that `signer` signed and that verifies. */
export async function storeCoreForms(receipts: Pick<TrustReceiptStore, 'log' | 'query'>, signer: Signer, options: StoreCoreFormsOptions): Promise<StoredCoreForms> {
  const log = options.log ?? (() => undefined)
  await receipts.log.flush()
  const done: StoredCoreForms = { stored: 0, unverified: 0, invalid: 0 }
  for (let cursor = 0; ; ) {
    const rows = await receipts.query.listCorePending(cursor, PAGE_ROWS, signer.publicKey)
    if (rows.length === 0) return done
    const writes: Promise<boolean>[] = []
    for (const row of rows) {
      const core = toCoreJson(row, signer, options.trustedKeys)
      if ('json' in core) {
        writes.push(receipts.log.setCoreJson(row.seq, core.json))
        done.stored++
      } else if (core.problem === 'unverified') {
        done.unverified++
        options.onUnverified?.(core.step)
        log(`receipt ${row.receiptId} (seq ${row.seq}) does not verify (${core.step}: ${core.detail}): no core form signed`)
      } else if (core.problem !== 'foreign_key') {
        done.invalid++
        log(`receipt at seq ${row.seq} has no core form: ${core.detail}`)
      }
    }
    await Promise.all(writes)
    cursor = rows[rows.length - 1]!.seq
  }
}
