// Store revision stamps (spec 03, Versioning): each store file carries `PRAGMA application_id` (which
// store it is) and `PRAGMA user_version` (its schema revision). Opening refuses a file that is not
// SQLite, a foreign database, another store's file, or a newer revision; it creates and stamps a fresh
// file and migrates an older revision forward. Migrations run forward only, so once a revision has
// moved, rolling back the binary alone is unsupported.
import { StoreFailedError, StoreRevisionError } from '../errors.js'
import {
  errorText,
  isNotADatabaseError,
  openDatabase,
  type DatabaseOptions,
  type SqliteDatabase,
  type SqliteExecutor,
} from './sqlite-driver.js'
import type { StoreName } from './store-paths.js'

/** A distinct 32-bit `application_id` per store ("Gt" plus two letters, so `xxd` shows whose file it is). */
export const STORE_APPLICATION_IDS: Readonly<Record<StoreName, number>> = Object.freeze({
  receipts: 0x47745263, // GtRc
  revocations: 0x47745276, // GtRv
  budgets: 0x47744275, // GtBu
  approvals: 0x47744170, // GtAp
  nonces: 0x47744e6f, // GtNo
  authority: 0x47744175, // GtAu
  capabilities: 0x47744370, // GtCp
  edge_sessions: 0x47744573, // GtEs
})

/**
 * Schema revision this binary writes per store (spec 03 names receipts 3, budgets 10, revocations 2,
 * authority 1; receipts moved to 4 when a row could be a tool call's core-only receipt).
 */
export const STORE_REVISIONS: Readonly<Record<StoreName, number>> = Object.freeze({
  receipts: 4,
  revocations: 2,
  budgets: 10,
  approvals: 1,
  nonces: 1,
  authority: 1,
  capabilities: 1,
  edge_sessions: 1,
})

/** Upgrades a file from revision `from` to `from + 1`, inside the opening transaction. */
export interface StoreMigration {
  from: number
  statements: readonly string[]
}

/** What a store declares about its file. */
export interface StoreSchema {
  store: StoreName
  /** Statements creating the current revision in a fresh file. */
  create: readonly string[]
  /** Forward migrations of older revisions (receipts 3 → 4). */
  migrations: readonly StoreMigration[]
}

/** The stamp read from a file. */
export interface StoreStamp {
  applicationId: number
  revision: number
  /** Tables, indexes, views and triggers already in the file. */
  schemaObjects: number
}

type StampPlan = { action: 'create' } | { action: 'none' } | { action: 'migrate'; migrations: StoreMigration[] }

/** Reads `application_id`, `user_version` and the number of schema objects. */
export async function readStoreStamp(db: SqliteExecutor): Promise<StoreStamp> {
  const id = await db.get<{ application_id: number }>('PRAGMA application_id')
  const version = await db.get<{ user_version: number }>('PRAGMA user_version')
  const objects = await db.get<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type IN ('table', 'index', 'view', 'trigger')")
  return { applicationId: id?.application_id ?? 0, revision: version?.user_version ?? 0, schemaObjects: objects?.n ?? 0 }
}

/** The store a Gate application id belongs to, if any. */
function storeOfApplicationId(applicationId: number): StoreName | undefined {
  const entry = Object.entries(STORE_APPLICATION_IDS).find(([, id]) => id === applicationId)
  return entry?.[0] as StoreName | undefined
}

/**
 * Opens a store file: refuses what is not this store's at this or an older revision, creates and stamps a
 * fresh file, migrates an older one. Returns the open connection (WAL, busy timeout, `synchronous`).
 */
export async function openStoreDatabase(schema: StoreSchema, path: string, options?: DatabaseOptions): Promise<SqliteDatabase> {
  const inspect = async (db: SqliteDatabase): Promise<void> => {
    planStamp(schema, path, await readStamp(schema, path, db))
  }
  const db = await openDatabase(path, options, { store: schema.store, inspect })
  try {
    // Re-read inside an IMMEDIATE transaction: two processes opening one fresh file stamp it once.
    await db.transaction(async tx => {
      const plan = planStamp(schema, path, await readStamp(schema, path, tx))
      if (plan.action === 'create') {
        for (const sql of schema.create) await tx.exec(sql)
      } else if (plan.action === 'migrate') {
        for (const migration of plan.migrations) {
          for (const sql of migration.statements) await tx.exec(sql)
        }
      } else {
        return
      }
      await tx.exec(`PRAGMA application_id = ${STORE_APPLICATION_IDS[schema.store]}`)
      await tx.exec(`PRAGMA user_version = ${STORE_REVISIONS[schema.store]}`)
    })
  } catch (err) {
    await db.close().catch(() => undefined)
    if (err instanceof StoreRevisionError || err instanceof StoreFailedError) throw err
    throw new StoreFailedError(schema.store, path, `cannot create or migrate the schema (${errorText(err)})`, err)
  }
  return db
}

async function readStamp(schema: StoreSchema, path: string, db: SqliteExecutor): Promise<StoreStamp> {
  try {
    return await readStoreStamp(db)
  } catch (err) {
    if (isNotADatabaseError(err)) throw refuse(schema, path, 'a file that is not a SQLite database', err)
    throw new StoreFailedError(schema.store, path, `cannot read the revision stamp (${errorText(err)})`, err)
  }
}

function planStamp(schema: StoreSchema, path: string, stamp: StoreStamp): StampPlan {
  const expectedId = STORE_APPLICATION_IDS[schema.store]
  const expectedRevision = STORE_REVISIONS[schema.store]
  if (stamp.applicationId === 0) {
    if (stamp.schemaObjects === 0 && stamp.revision === 0) return { action: 'create' }
    return fail(
      `a foreign SQLite database (application_id 0, user_version ${stamp.revision}, ${stamp.schemaObjects} schema object(s))`,
    )
  }
  if (stamp.applicationId !== expectedId) {
    const other = storeOfApplicationId(stamp.applicationId)
    return fail(
      other === undefined
        ? `a database of another application (application_id ${hex(stamp.applicationId)})`
        : `the Gate ${other} store (application_id ${hex(stamp.applicationId)}, revision ${stamp.revision})`,
    )
  }
  if (stamp.revision === expectedRevision) return { action: 'none' }
  if (stamp.revision > expectedRevision) {
    return fail(`revision ${stamp.revision}, newer than revision ${expectedRevision} this binary supports (migrations run forward only)`)
  }
  const migrations: StoreMigration[] = []
  for (let from = stamp.revision; from < expectedRevision; from++) {
    const step = schema.migrations.find(migration => migration.from === from)
    if (step === undefined) return fail(`revision ${stamp.revision}, with no migration from revision ${from} to ${from + 1}`)
    migrations.push(step)
  }
  return { action: 'migrate', migrations }

  function fail(found: string): never {
    throw refuse(schema, path, found)
  }
}

function refuse(schema: StoreSchema, path: string, found: string, cause?: unknown): StoreRevisionError {
  return new StoreRevisionError({ path, expectedStore: schema.store, expectedRevision: STORE_REVISIONS[schema.store], found }, cause)
}

function hex(id: number): string {
  return `0x${(id >>> 0).toString(16).padStart(8, '0')}`
}
