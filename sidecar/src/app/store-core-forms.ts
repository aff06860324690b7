// Core receipts (spec 03, gate.receipt.v1) are made when a receipt is first read (trust-control's
// query and point-load routes store what they compute), never ahead of time: most receipts are never
// read, and a conversion re-signs, costing about what the evaluation did. A key rotation is the
// exception: once the retiring seed is wiped, a row it signed can only be served in its HTTP form, so
// what it signed is converted and stored first, here.
import type { Signer } from '@gate/sdk'
import { toCoreJson } from '@gate/trust'
import type { TrustReceiptStore } from '../stores/index.js'

/** What `storeCoreForms` did. */
export interface StoredCoreForms {
  stored: number
  /** Rows whose HTTP form could not be read or mapped (they stay as they are). */
  invalid: number
}

const PAGE_ROWS = 512

/** Stores the core form of every committed row still without one that `signer` signed. */
export async function storeCoreForms(receipts: Pick<TrustReceiptStore, 'log' | 'query'>, signer: Signer, log: (line: string) => void = () => undefined): Promise<StoredCoreForms> {
  await receipts.log.flush()
  const done: StoredCoreForms = { stored: 0, invalid: 0 }
  for (let cursor = 0; ; ) {
    const rows = await receipts.query.listCorePending(cursor, PAGE_ROWS, signer.publicKey)
    if (rows.length === 0) return done
    const writes: Promise<boolean>[] = []
    for (const row of rows) {
      const core = toCoreJson(row.httpJson, signer)
      if ('json' in core) {
        writes.push(receipts.log.setCoreJson(row.seq, core.json))
        done.stored++
      } else if (core.problem !== 'foreign_key') {
        done.invalid++
        log(`receipt at seq ${row.seq} has no core form: ${core.detail}`)
      }
    }
    await Promise.all(writes)
    cursor = rows[rows.length - 1]!.seq
  }
}
