// The transparency log's SQLite backend (@gate/trust's TransparencyLogBackend), in the receipt file beside
// the receipts: its own connection, three tables of its own (created if absent, so older files gain
// them on first open), and reads of the receipts table by seq. Writes are short IMMEDIATE transactions
// (a batch of nodes, or one checkpoint); the receipt writer waits out at most one of them (busy_timeout).
// A batch of nodes is one SQL script run in a single call into SQLite: as a sequence of statements from
// a busy event loop it held the write lock across event-loop turns, and the receipt writer's commits
// waited on it (a fifth of them under load on the sqlite3 addon).
//
// Keeping the tree inside the receipt file means one file to back up, but it also means rolling the file
// back rolls the tree and checkpoints back with it: the reference that catches that lives elsewhere
// (docs/transparency.md, Rollback).
import { randomBytes } from 'node:crypto'
import { bytesToHex, type CheckpointStatement, type TreeNode, type TreeNodeRef } from '@gate/sdk'
import { StoreFailedError, StoreInputError } from '../errors.js'
import { AUDITED_COLUMNS, type AuditedReceipt, type LogReceipt, type TransparencyLogBackend } from '@gate/trust'
import { openDatabase, type DatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS transparency_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    log_id TEXT NOT NULL,
    tree_size INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS transparency_nodes (
    level INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    hash BLOB NOT NULL,
    PRIMARY KEY (level, idx)
  ) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS transparency_checkpoints (
    tree_size INTEGER PRIMARY KEY,
    statement TEXT NOT NULL
  )`,
]

// the tree_size update of appendNodes fails with this when the stored tree moved (compare-and-set)
const TREE_MOVED = /NOT NULL constraint failed: transparency_state\.tree_size/
// and the checkpoint insert of addCheckpoint with this when another checkpoint was added meanwhile
const CHECKPOINTS_MOVED = /NOT NULL constraint failed: transparency_checkpoints\.statement/
const MAX_CHECKPOINT_ATTEMPTS = 10

/** Opens the log's tables in the receipt file at `path` (a file: an in-memory store has no log). */
export async function openTransparencyLogStore(path: string, options: DatabaseOptions = {}): Promise<TransparencyLogStore> {
  const db = await openDatabase(path, options, { store: 'transparency log' })
  try {
    return await attachTransparencyLog(db)
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
}

/**
 * The log's tables on a connection already open to a receipt file (created if absent): the receipt
 * writer thread keeps the tree on its own connection (hosted-checkpointer.ts). Closing the store closes `db`.
 */
export async function attachTransparencyLog(db: SqliteDatabase): Promise<TransparencyLogStore> {
  const receipts = await db.get<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'receipts'")
  if (receipts?.n !== 1) throw new StoreFailedError('transparency log', db.path, 'is not a receipt store (no receipts table)')
  await db.transaction(async tx => {
    for (const sql of SCHEMA) await tx.exec(sql)
    await tx.run('INSERT OR IGNORE INTO transparency_state (id, log_id, tree_size) VALUES (1, ?, 0)', [randomBytes(32).toString('hex')])
  })
  return new TransparencyLogStore(db)
}

/** The SQLite TransparencyLogBackend. */
export class TransparencyLogStore implements TransparencyLogBackend {
  readonly #db: SqliteDatabase

  constructor(db: SqliteDatabase) {
    this.#db = db
  }

  get location(): string {
    return `sqlite ${this.#db.path}`
  }

  async logId(): Promise<string> {
    return (await this.#state()).log_id
  }

  async treeSize(): Promise<number> {
    return (await this.#state()).tree_size
  }

  latestReceipt(): Promise<{ seq: number; timestamp: number } | undefined> {
    return this.#db.get<{ seq: number; timestamp: number }>('SELECT seq, timestamp FROM receipts ORDER BY seq DESC LIMIT 1')
  }

  receiptsAfter(afterSeq: number, limit: number): Promise<LogReceipt[]> {
    return this.#db.all<LogReceipt>('SELECT seq, receipt_id AS receiptId FROM receipts WHERE seq > ? ORDER BY seq LIMIT ?', [afterSeq, limit])
  }

  auditedReceiptsAfter(afterSeq: number, limit: number): Promise<AuditedReceipt[]> {
    return this.#db.all<AuditedReceipt>(`SELECT ${AUDITED_COLUMNS} FROM receipts WHERE seq > ? ORDER BY seq LIMIT ?`, [afterSeq, limit])
  }

  async leafHashesFrom(fromIndex: number, limit: number): Promise<Uint8Array[]> {
    const rows = await this.#db.all<{ idx: number; hash: Uint8Array }>('SELECT idx, hash FROM transparency_nodes WHERE level = 0 AND idx >= ? ORDER BY idx LIMIT ?', [fromIndex, limit])
    // a missing leaf ends the run: the caller sees fewer hashes than it asked for
    const out: Uint8Array[] = []
    for (const [k, row] of rows.entries()) {
      if (row.idx !== fromIndex + k) break
      out.push(row.hash)
    }
    return out
  }

  async appendNodes(expectedSize: number, newSize: number, nodes: readonly TreeNode[]): Promise<boolean> {
    // Literal values (a script takes no parameters): integers checked here, hashes as blob literals.
    for (const n of [expectedSize, newSize, ...nodes.flatMap(node => [node.level, node.index])]) {
      if (!Number.isSafeInteger(n) || n < 0) throw new StoreInputError('tree node position', 'a non-negative integer', n)
    }
    // Compare-and-set first: a tree another process moved sets NULL into a NOT NULL column, which
    // aborts the script before any node is written.
    let sql = `UPDATE transparency_state SET tree_size = CASE tree_size WHEN ${expectedSize} THEN ${newSize} END WHERE id = 1;`
    if (nodes.length > 0) sql += `\nINSERT OR REPLACE INTO transparency_nodes (level, idx, hash) VALUES ${nodes.map(n => `(${n.level},${n.index},X'${bytesToHex(n.hash)}')`).join(',')};`
    try {
      await this.#db.transactionScript(sql)
    } catch (err) {
      if (TREE_MOVED.test((err as Error).message)) return false
      throw err
    }
    return true
  }

  async nodes(refs: readonly TreeNodeRef[]): Promise<Uint8Array[]> {
    if (refs.length === 0) return []
    const rows = await this.#db.all<{ level: number; idx: number; hash: Uint8Array }>(
      `SELECT level, idx, hash FROM transparency_nodes WHERE ${refs.map(() => '(level = ? AND idx = ?)').join(' OR ')}`,
      refs.flatMap(r => [r.level, r.index]),
    )
    const found = new Map(rows.map(r => [`${r.level}:${r.idx}`, r.hash]))
    return refs.map(r => {
      const hash = found.get(`${r.level}:${r.index}`)
      if (hash === undefined) throw new StoreFailedError('transparency log', this.#db.path, `has no tree node ${r.level}:${r.index} (the tree is damaged)`)
      return hash
    })
  }

  async addCheckpoint(build: (latest: CheckpointStatement | undefined) => CheckpointStatement | undefined): Promise<{ checkpoint: CheckpointStatement | undefined; created: boolean }> {
    // Optimistic, so no lock is held while `build` signs: read the newest, build on it, and store it
    // only if the newest is still that one (else NULL meets the NOT NULL statement column); another
    // process's checkpoint in between means building again on it.
    for (let attempt = 1; ; attempt++) {
      const row = await this.#db.get<{ size: number; statement: string }>('SELECT tree_size AS size, statement FROM transparency_checkpoints ORDER BY tree_size DESC LIMIT 1')
      const latest = row === undefined ? undefined : (JSON.parse(row.statement) as CheckpointStatement)
      const next = build(latest)
      if (next === undefined) return { checkpoint: latest, created: false }
      if (!Number.isSafeInteger(next.tree_size) || next.tree_size < 0) throw new StoreInputError('tree_size', 'a non-negative integer', next.tree_size)
      const text = JSON.stringify(next).replaceAll("'", "''")
      try {
        await this.#db.transactionScript(
          `INSERT INTO transparency_checkpoints (tree_size, statement) VALUES (${next.tree_size}, CASE WHEN (SELECT max(tree_size) FROM transparency_checkpoints) IS ${row === undefined ? 'NULL' : row.size} THEN '${text}' END);`,
        )
        return { checkpoint: next, created: true }
      } catch (err) {
        if (!CHECKPOINTS_MOVED.test((err as Error).message) || attempt === MAX_CHECKPOINT_ATTEMPTS) throw err
      }
    }
  }

  async latestCheckpoint(): Promise<CheckpointStatement | undefined> {
    return parse(await this.#db.get<{ statement: string }>('SELECT statement FROM transparency_checkpoints ORDER BY tree_size DESC LIMIT 1'))
  }

  async checkpoint(treeSize: number): Promise<CheckpointStatement | undefined> {
    return parse(await this.#db.get<{ statement: string }>('SELECT statement FROM transparency_checkpoints WHERE tree_size = ?', [treeSize]))
  }

  async checkpoints(afterSize: number, limit: number): Promise<CheckpointStatement[]> {
    const rows = await this.#db.all<{ statement: string }>('SELECT statement FROM transparency_checkpoints WHERE tree_size > ? ORDER BY tree_size LIMIT ?', [afterSize, limit])
    return rows.map(r => JSON.parse(r.statement) as CheckpointStatement)
  }

  async checkpointCount(): Promise<number> {
    return (await this.#db.get<{ n: number }>('SELECT count(*) AS n FROM transparency_checkpoints'))?.n ?? 0
  }

  close(): Promise<void> {
    return this.#db.close()
  }

  async #state(): Promise<{ log_id: string; tree_size: number }> {
    const state = await this.#db.get<{ log_id: string; tree_size: number }>('SELECT log_id, tree_size FROM transparency_state WHERE id = 1')
    if (state === undefined) throw new StoreFailedError('transparency log', this.#db.path, 'lost its state row')
    return state
  }
}

function parse(row: { statement: string } | undefined): CheckpointStatement | undefined {
  return row === undefined ? undefined : (JSON.parse(row.statement) as CheckpointStatement)
}
