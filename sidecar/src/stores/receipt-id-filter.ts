// Which receipt ids are certainly not stored: a Bloom filter over the stored receipts' id prefixes, for
// trust-control's ingest, which must store each shipped receipt once. Without it every fresh receipt (most
// of what arrives) is an unknown id, and a point load of an unknown id probes every 4,096-row id bucket
// (receipt-query.ts): at 1,000,000 receipts that is 245 index probes per receipt, and ingest ran about
// five times slower than on an empty store. With it only a "maybe" (a receipt sent again, or a false
// positive) is looked up.
//
// The filter follows the table, not the writes of this process: it is filled from the receipts_by_id
// index bucket by bucket on first use, and before each check from the rows past the highest seq it has
// seen, so rows another process appended are in it too. It never says "not stored" of a stored id.
import type { SqliteDatabase } from './sqlite-driver.js'

/** 2^26 bits (8 MiB): at 1,000,000 ids about 0.1% false positives, at 10,000,000 about 7%. */
const FILTER_BITS_LOG2 = 26
const HALF = 2 ** FILTER_BITS_LOG2

/** The id prefixes (receipt-log.ts `idPrefix`, 52 bits) of the stored receipts, as a Bloom filter. */
export class ReceiptIdFilter {
  readonly #reader: SqliteDatabase
  readonly #bits = new Uint8Array(HALF / 8)
  // the highest seq whose row is in the filter; undefined until the first fill
  #throughSeq: number | undefined
  #syncing: Promise<void> | undefined

  constructor(reader: SqliteDatabase) {
    this.#reader = reader
  }

  /** False when no stored receipt has this id prefix (call `sync` first); true when one may. */
  mayContain(prefix: number): boolean {
    return bitsOf(prefix).every(bit => (this.#bits[bit >>> 3]! & (1 << (bit & 7))) !== 0)
  }

  /** Brings the filter up to every committed row (the whole table on first use). */
  sync(): Promise<void> {
    // one sync at a time; a caller arriving during one waits for it and then runs its own
    const run = (this.#syncing ?? Promise.resolve()).then(() => this.#sync())
    this.#syncing = run.catch(() => undefined)
    return run
  }

  async #sync(): Promise<void> {
    if (this.#throughSeq === undefined) {
      // Under WAL each statement reads a committed snapshot: rows committed during the fill are picked
      // up by the catch-up below, from the seq read before it began.
      const start = await this.#reader.get<{ seq: number; bucket: number | null }>('SELECT coalesce(max(seq), 0) AS seq, max(id_bucket) AS bucket FROM receipts')
      for (let bucket = 0; bucket <= (start?.bucket ?? -1); bucket++) {
        const rows = await this.#reader.all<{ p: number }>('SELECT id_prefix AS p FROM receipts WHERE id_bucket = ?', [bucket])
        for (const row of rows) this.#add(row.p)
      }
      this.#throughSeq = start?.seq ?? 0
    }
    const rows = await this.#reader.all<{ seq: number; p: number }>('SELECT seq, id_prefix AS p FROM receipts WHERE seq > ? ORDER BY seq', [this.#throughSeq])
    for (const row of rows) this.#add(row.p)
    if (rows.length > 0) this.#throughSeq = rows[rows.length - 1]!.seq
  }

  #add(prefix: number): void {
    for (const bit of bitsOf(prefix)) this.#bits[bit >>> 3] = this.#bits[bit >>> 3]! | (1 << (bit & 7))
  }
}

// The prefix is 52 bits of a SHA-256 digest, uniformly random: its two 26-bit halves are the two hashes.
function bitsOf(prefix: number): [number, number] {
  return [Math.floor(prefix / HALF), prefix % HALF]
}
