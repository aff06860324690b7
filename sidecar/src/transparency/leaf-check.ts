// Which committed rows may become leaves of the transparency log. A signed checkpoint commits the
// authority to every leaf below it, so nothing becomes a leaf unverified: a row this process committed
// was signed here (or verified by ingest before it was stored) and is taken as it is; a row another
// process appended to the same table (a sidecar beside `gate trust serve`, another node of a fleet, any
// writer with access to the file) is read back with its stored text and must pass the same check as a
// core form on read (@gate/trust's checkStoredReceipt): its id is the row's, its id and signature verify,
// and its signer is a key this log accepts. The first row that fails stops the log there, as a missing
// row does; it is never skipped. Only this process's own rows are cheap; the others cost one signature
// verification each, off the event loop.
import { checkStoredReceiptOffThread, readStoredReceipt, type CommittedReceipts, type LogReceipt, type StoredReceiptStep, type TransparencyLogBackend } from '@gate/trust'

/** Of `keys`, those whose receipts the log accepts (the authority's trusted keys, keys enrolled for ingest, this process's own). */
export type AcceptedSigners = (keys: readonly string[]) => Promise<ReadonlySet<string>>

/** The first row of a batch that may not become a leaf, and why. */
export interface LeafRefusal {
  /** Its position in the batch: the rows before it may become leaves. */
  index: number
  seq: number
  receiptId: string
  step: StoredReceiptStep
  detail: string
}

// rows of this process's commits remembered until they become leaves; past this many (a log far
// behind its writer) later ones are verified like any other row instead
const OWN_ROWS_LIMIT = 65_536
// signatures verified at once (the libuv pool runs them in parallel)
const VERIFY_CONCURRENCY = 64

export class LeafCheck {
  readonly #backend: Pick<TransparencyLogBackend, 'auditedReceiptsAfter'>
  readonly #acceptedSigners: AcceptedSigners
  /** seq -> receipt id of rows this process committed that are not leaves yet, in seq order. */
  readonly #own = new Map<number, string>()

  constructor(backend: Pick<TransparencyLogBackend, 'auditedReceiptsAfter'>, acceptedSigners: AcceptedSigners) {
    this.#backend = backend
    this.#acceptedSigners = acceptedSigners
  }

  /** Remembers a batch this process committed (the writer's follower call). */
  committed(batch: Pick<CommittedReceipts, 'firstSeq' | 'receiptIds'>): void {
    batch.receiptIds.forEach((id, i) => {
      if (this.#own.size < OWN_ROWS_LIMIT) this.#own.set(batch.firstSeq + i, id)
    })
  }

  /** Forgets the remembered rows the tree now covers (leaves up to seq `size`). */
  covered(size: number): void {
    for (const seq of this.#own.keys()) {
      if (seq > size) break
      this.#own.delete(seq)
    }
  }

  /**
   * The rows of `rows` (read in seq order) that may become leaves, and the first refusal: rows this
   * process committed as they are; for the others, the batch is read again with its stored texts and
   * each is verified.
   */
  async check(rows: readonly LogReceipt[]): Promise<{ rows: readonly LogReceipt[]; refusal: LeafRefusal | undefined }> {
    const firstOther = rows.findIndex(r => this.#own.get(r.seq) !== r.receiptId)
    if (firstOther < 0) return { rows, refusal: undefined }
    // one read of ids and texts for what follows: the ids that become leaves are those of the texts verified
    const from = rows[firstOther]!.seq
    const read = await this.#backend.auditedReceiptsAfter(from - 1, rows.length - firstOther)
    const batch: LogReceipt[] = [...rows.slice(0, firstOther), ...read.map(r => ({ seq: r.seq, receiptId: r.receiptId }))]
    const others = read.flatMap((row, k) => (this.#own.get(row.seq) === row.receiptId ? [] : [{ index: firstOther + k, row }]))
    const parsed = others.map(o => ({ ...o, stored: readStoredReceipt(o.row) }))
    const accepted = await this.#acceptedSigners([...new Set(parsed.flatMap(p => (p.stored.ok ? [p.stored.kernelKey] : [])))])
    for (let i = 0; i < parsed.length; i += VERIFY_CONCURRENCY) {
      const chunk = parsed.slice(i, i + VERIFY_CONCURRENCY)
      const checks = await Promise.all(chunk.map(p => (p.stored.ok ? checkStoredReceiptOffThread(p.row, p.stored, accepted) : Promise.resolve(p.stored))))
      const failed = checks.findIndex(c => !c.ok)
      if (failed >= 0) {
        const { index, row } = chunk[failed]!
        const check = checks[failed] as Extract<(typeof checks)[number], { ok: false }>
        return { rows: batch.slice(0, index), refusal: { index, seq: row.seq, receiptId: row.receiptId, step: check.step, detail: check.detail } }
      }
    }
    return { rows: batch, refusal: undefined }
  }
}
