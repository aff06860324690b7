// The transparency log's PostgreSQL backend (../../transparency/log-backend.ts), in the trust-control
// database beside the receipts (migration 2). Leaves are the receipts in seq order, which the receipt
// log keeps consecutive and commit-ordered across nodes. Writes hold a transaction advisory lock, so
// several nodes growing the tree at once serialize; each append is still compare-and-set on the stored
// size, and a node that loses reloads the frontier and carries on (checkpointer.ts).
import type { CheckpointStatement, TreeNode, TreeNodeRef } from '@gate/sdk'
import { StoreFailedError } from '../errors.js'
import type { AuditedReceipt, LogReceipt, TransparencyLogBackend } from '../store-ports.js'
import { AUDITED_COLUMNS } from '../stores/receipt-columns.js'
import type { PgDatabase } from './pg-database.js'
import { TRANSPARENCY_LOCK } from './pg-locks.js'

export class PgTransparencyLogStore implements TransparencyLogBackend {
  readonly #db: PgDatabase

  constructor(db: PgDatabase) {
    this.#db = db
  }

  get location(): string {
    return `postgres ${this.#db.location}`
  }

  async logId(): Promise<string> {
    return (await this.#state()).log_id
  }

  async treeSize(): Promise<number> {
    return (await this.#state()).tree_size
  }

  latestReceipt(): Promise<{ seq: number; timestamp: number } | undefined> {
    return this.#db.get<{ seq: number; timestamp: number }>('SELECT seq, timestamp FROM receipt_ids ORDER BY seq DESC LIMIT 1')
  }

  receiptsAfter(afterSeq: number, limit: number): Promise<LogReceipt[]> {
    return this.#db.all<LogReceipt>('SELECT seq, receipt_id AS "receiptId" FROM receipts WHERE seq > $1 ORDER BY seq LIMIT $2', [afterSeq, limit])
  }

  auditedReceiptsAfter(afterSeq: number, limit: number): Promise<AuditedReceipt[]> {
    return this.#db.all<AuditedReceipt>(`SELECT ${AUDITED_COLUMNS} FROM receipts WHERE seq > $1 ORDER BY seq LIMIT $2`, [afterSeq, limit])
  }

  async leafHashesFrom(fromIndex: number, limit: number): Promise<Uint8Array[]> {
    const rows = await this.#db.all<{ idx: number; hash: Buffer }>('SELECT idx, hash FROM transparency_nodes WHERE level = 0 AND idx >= $1 ORDER BY idx LIMIT $2', [fromIndex, limit])
    const out: Uint8Array[] = []
    for (const [k, row] of rows.entries()) {
      if (row.idx !== fromIndex + k) break
      out.push(new Uint8Array(row.hash))
    }
    return out
  }

  appendNodes(expectedSize: number, newSize: number, nodes: readonly TreeNode[]): Promise<boolean> {
    return this.#db.transaction(async tx => {
      await tx.get('SELECT pg_advisory_xact_lock($1)', [TRANSPARENCY_LOCK.toString()])
      const state = await tx.get<{ tree_size: number }>('SELECT tree_size FROM transparency_state WHERE id = 1')
      if (state?.tree_size !== expectedSize) return false
      if (nodes.length > 0) {
        await tx.run(
          `INSERT INTO transparency_nodes (level, idx, hash) SELECT * FROM unnest($1::integer[], $2::bigint[], $3::bytea[])
           ON CONFLICT (level, idx) DO UPDATE SET hash = excluded.hash`,
          [nodes.map(n => n.level), nodes.map(n => n.index), nodes.map(n => `\\x${Buffer.from(n.hash).toString('hex')}`)],
        )
      }
      await tx.run('UPDATE transparency_state SET tree_size = $1 WHERE id = 1', [newSize])
      return true
    })
  }

  async nodes(refs: readonly TreeNodeRef[]): Promise<Uint8Array[]> {
    if (refs.length === 0) return []
    const rows = await this.#db.all<{ level: number; idx: number; hash: Buffer }>(
      'SELECT level, idx, hash FROM transparency_nodes WHERE (level, idx) IN (SELECT * FROM unnest($1::integer[], $2::bigint[]))',
      [refs.map(r => r.level), refs.map(r => r.index)],
    )
    const found = new Map(rows.map(r => [`${r.level}:${r.idx}`, r.hash]))
    return refs.map(r => {
      const hash = found.get(`${r.level}:${r.index}`)
      if (hash === undefined) throw new StoreFailedError('transparency log', this.#db.location, `has no tree node ${r.level}:${r.index} (the tree is damaged)`)
      return new Uint8Array(hash)
    })
  }

  addCheckpoint(build: (latest: CheckpointStatement | undefined) => CheckpointStatement | undefined): Promise<{ checkpoint: CheckpointStatement | undefined; created: boolean }> {
    return this.#db.transaction(async tx => {
      await tx.get('SELECT pg_advisory_xact_lock($1)', [TRANSPARENCY_LOCK.toString()])
      const row = await tx.get<{ statement: string }>('SELECT statement FROM transparency_checkpoints ORDER BY tree_size DESC LIMIT 1')
      const latest = row === undefined ? undefined : (JSON.parse(row.statement) as CheckpointStatement)
      const next = build(latest)
      if (next === undefined) return { checkpoint: latest, created: false }
      await tx.run('INSERT INTO transparency_checkpoints (tree_size, statement) VALUES ($1, $2)', [next.tree_size, JSON.stringify(next)])
      return { checkpoint: next, created: true }
    })
  }

  async latestCheckpoint(): Promise<CheckpointStatement | undefined> {
    return parse(await this.#db.get<{ statement: string }>('SELECT statement FROM transparency_checkpoints ORDER BY tree_size DESC LIMIT 1'))
  }

  async checkpoint(treeSize: number): Promise<CheckpointStatement | undefined> {
    return parse(await this.#db.get<{ statement: string }>('SELECT statement FROM transparency_checkpoints WHERE tree_size = $1', [treeSize]))
  }

  async checkpoints(afterSize: number, limit: number): Promise<CheckpointStatement[]> {
    const rows = await this.#db.all<{ statement: string }>('SELECT statement FROM transparency_checkpoints WHERE tree_size > $1 ORDER BY tree_size LIMIT $2', [afterSize, limit])
    return rows.map(r => JSON.parse(r.statement) as CheckpointStatement)
  }

  async checkpointCount(): Promise<number> {
    return (await this.#db.get<{ n: number }>('SELECT count(*) AS n FROM transparency_checkpoints'))?.n ?? 0
  }

  /** The pool belongs to the stores. */
  async close(): Promise<void> {}

  async #state(): Promise<{ log_id: string; tree_size: number }> {
    const state = await this.#db.get<{ log_id: string; tree_size: number }>('SELECT log_id, tree_size FROM transparency_state WHERE id = 1')
    if (state === undefined) throw new StoreFailedError('transparency log', this.#db.location, 'lost its state row')
    return state
  }
}

function parse(row: { statement: string } | undefined): CheckpointStatement | undefined {
  return row === undefined ? undefined : (JSON.parse(row.statement) as CheckpointStatement)
}
