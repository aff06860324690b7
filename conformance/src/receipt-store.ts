// The receipt store of the sidecar under test, for the checks that change a stored receipt behind its
// back (receipt.tampered-store-unsigned): only where the suite owns that store, as with --start-sidecar
// (a temporary file), never a user's. `gateReceiptFile` is Gate's SQLite receipt file (docs/receipts.md:
// table `receipts`, the signed HttpReceipt in `http_json`, found by `receipt_id`), opened with the
// sqlite3 driver of the installed @gate/sidecar, beside the running sidecar (WAL: it keeps serving).
import { sidecarRequire } from './gate-package.js'

/** Changes stored receipts of the sidecar under test. */
export interface ReceiptStoreAccess {
  /** Replaces `from` with `to` in the stored JSON of the receipt `receiptId`; resolves with the rows changed. */
  alterReceipt(receiptId: string, from: string, to: string): Promise<number>
}

interface Sqlite3Database {
  configure(option: 'busyTimeout', ms: number): void
  run(sql: string, params: unknown[], callback: (this: { changes: number }, err: Error | null) => void): void
  close(callback: (err: Error | null) => void): void
}
interface Sqlite3 {
  Database: new (path: string, mode: number, callback: (err: Error | null) => void) => Sqlite3Database
  OPEN_READWRITE: number
}

/** Gate's SQLite receipt file at `path` (it must exist: it is the running sidecar's). */
export function gateReceiptFile(path: string, loadDriver: () => Sqlite3 = defaultDriver): ReceiptStoreAccess {
  return {
    async alterReceipt(receiptId, from, to) {
      const sqlite3 = loadDriver()
      const db = await new Promise<Sqlite3Database>((resolve, reject) => {
        const d = new sqlite3.Database(path, sqlite3.OPEN_READWRITE, err => (err === null ? resolve(d) : reject(err)))
      })
      try {
        // the sidecar's writer commits to the same file: wait for its lock rather than fail
        db.configure('busyTimeout', 5000)
        return await new Promise<number>((resolve, reject) =>
          db.run('UPDATE receipts SET http_json = replace(http_json, ?, ?) WHERE receipt_id = ? AND instr(http_json, ?) > 0', [from, to, receiptId, from], function (err) {
            if (err === null) resolve(this.changes)
            else reject(err)
          }),
        )
      } finally {
        await new Promise<void>(resolve => db.close(() => resolve()))
      }
    },
  }
}

function defaultDriver(): Sqlite3 {
  return sidecarRequire('a check that alters a stored receipt')('sqlite3') as Sqlite3
}
