// Appending receipt rows as multi-row INSERT … VALUES in one transaction: how the receipt store writes
// on node:sqlite, on the main thread or on its append thread (append-thread.ts). Shared by both so the
// rows, seq and id_bucket are the same whichever thread commits them.
import type { SqliteDatabase, SqlValue } from './sqlite-driver.js'

/**
 * Rows per `id_bucket` (~15 index pages): a commit of 50 receipts dirties at most those pages instead of
 * one page per receipt. Smaller is cheaper to write and slower to look up (one probe per bucket).
 */
export const ID_BUCKET_ROWS = 4096

/** The columns of an append, in order: seq and id_bucket, then one value per column of a row. */
export const APPEND_COLUMNS =
  'seq, id_bucket, receipt_id, id_prefix, timestamp, request_id, method, route_pattern, tool_server, tool_name, outcome, capability_id, tenant, subject_key, cost_units, cost_currency, attempted_cost_units, kind, decision_receipt_id, http_json, core_json'

const VALUES_CHUNKS = [64, 16, 4, 1] as const
const APPEND_VALUES_SQL = new Map<number, string>()

/** `INSERT INTO receipts (…) VALUES (…), …` for `rows` rows. */
function appendValuesSql(rows: number): string {
  let sql = APPEND_VALUES_SQL.get(rows)
  if (sql === undefined) {
    const one = `(${APPEND_COLUMNS.split(',').map(() => '?').join(', ')})`
    sql = `INSERT INTO receipts (${APPEND_COLUMNS}) VALUES ${Array.from({ length: rows }, () => one).join(', ')}`
    APPEND_VALUES_SQL.set(rows, sql)
  }
  return sql
}

/**
 * Appends `rows` (each the column values after seq and id_bucket) in one IMMEDIATE transaction: the
 * write lock is held from the read of the table's end to the commit, so seq and id_bucket follow the
 * real end of the table even with another writer on the file. Chunks of 64, 16, 4 and 1 rows keep the
 * number of distinct statements (and prepared plans) at four. Resolves with the last seq.
 */
export function appendRowsAsValues(db: SqliteDatabase, rows: readonly (readonly unknown[])[]): Promise<{ lastInsertRowid: number }> {
  return db.transaction(async tx => {
    let seq = (await tx.get<{ s: number }>('SELECT coalesce(max(seq), 0) AS s FROM receipts'))?.s ?? 0
    for (let i = 0; i < rows.length; ) {
      const size = VALUES_CHUNKS.find(n => n <= rows.length - i)!
      const params: unknown[] = []
      for (const row of rows.slice(i, i + size)) {
        seq++
        params.push(seq, Math.floor(seq / ID_BUCKET_ROWS), ...row)
      }
      await tx.run(appendValuesSql(size), params as SqlValue[])
      i += size
    }
    return { lastInsertRowid: seq }
  })
}
