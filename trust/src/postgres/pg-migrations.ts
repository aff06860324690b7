// Versioned migrations of the PostgreSQL schema, applied at `gate trust serve` start and by
// `gate trust migrate`. The applied versions live in `gate_schema_migrations` with a checksum of each
// migration's statements. The runner holds a session advisory lock while it reads and applies, so nodes
// starting at once never race: the first migrates, the others wait and then find nothing to do.
// Like the SQLite revision stamps (spec 03, Versioning), it refuses a database that is not Gate's, one a
// newer binary has migrated (no binary-only rollback), and one whose applied migration differs from this
// binary's (an edited migration). Migrations run forward only, each in its own transaction.
import { createHash } from 'node:crypto'
import { StoreRevisionError } from '../errors.js'
import { MIGRATION_LOCK } from './pg-locks.js'
import type { PgDatabase } from './pg-database.js'
import { PG_MIGRATIONS } from './migrations/index.js'
import type { PgMigration } from './migrations/migration.js'

export type { PgMigration } from './migrations/migration.js'

/** What `migrate` did. */
export interface MigrationResult {
  /** Versions applied by this call, in order. */
  applied: number[]
  /** The schema version afterwards. */
  version: number
}

const TABLE = 'gate_schema_migrations'
// Tables of migration 1: a database holding one of them without the migrations table is not Gate's.
const GATE_TABLES = ['receipts', 'revocations', 'capabilities', 'authority_keys', 'cluster_nodes']

/** The checksum recorded for a migration: SHA-256 over its statements. */
export function migrationChecksum(migration: PgMigration): string {
  return createHash('sha256').update(JSON.stringify(migration.statements)).digest('hex')
}

/** Brings the schema to the newest version this binary knows; see the module comment for refusals. */
export async function migrate(db: PgDatabase, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<MigrationResult> {
  return db.withClient(async client => {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()])
    try {
      const exists = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [TABLE])
      if (exists.rows[0]?.present !== true) {
        const foreign = await client.query<{ name: string }>('SELECT relname AS name FROM pg_class WHERE relkind = $1 AND relname = ANY($2) AND pg_table_is_visible(oid)', ['r', GATE_TABLES])
        if (foreign.rows.length > 0) {
          throw refusal(db, `tables ${foreign.rows.map(r => r.name).join(', ')} without ${TABLE} (not a Gate database, or one created by hand)`)
        }
        await client.query(`CREATE TABLE ${TABLE} (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
      }
      const rows = (await client.query<{ version: number; name: string; checksum: string }>(`SELECT version, name, checksum FROM ${TABLE} ORDER BY version`)).rows
      const known = new Map(migrations.map(m => [m.version, m]))
      for (const row of rows) {
        const migration = known.get(row.version)
        if (migration === undefined) throw refusal(db, `schema version ${row.version} (${row.name}), newer than this binary knows (${latestVersion(migrations)}); a binary-only rollback is unsupported`)
        if (migrationChecksum(migration) !== row.checksum) throw refusal(db, `migration ${row.version} (${row.name}) applied with other statements than this binary's`)
      }
      const done = new Set(rows.map(r => r.version))
      const applied: number[] = []
      for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
        if (done.has(migration.version)) continue
        await client.query('BEGIN')
        try {
          for (const sql of migration.statements) await client.query(sql)
          await client.query(`INSERT INTO ${TABLE} (version, name, checksum) VALUES ($1, $2, $3)`, [migration.version, migration.name, migrationChecksum(migration)])
          await client.query('COMMIT')
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined)
          throw err
        }
        applied.push(migration.version)
      }
      return { applied, version: latestVersion(migrations) }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]).catch(() => undefined)
    }
  })
}

/** The schema version of the database (0 before the first migration). */
export async function schemaVersion(db: PgDatabase): Promise<number> {
  const exists = await db.get<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [TABLE])
  if (exists?.present !== true) return 0
  return (await db.get<{ version: number | null }>(`SELECT max(version) AS version FROM ${TABLE}`))?.version ?? 0
}

function latestVersion(migrations: readonly PgMigration[]): number {
  return Math.max(0, ...migrations.map(m => m.version))
}

function refusal(db: PgDatabase, found: string): StoreRevisionError {
  return new StoreRevisionError({ path: db.location, expectedStore: 'trust-control', expectedRevision: latestVersion(PG_MIGRATIONS), found })
}
