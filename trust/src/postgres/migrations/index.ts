// Every PostgreSQL migration, in version order. A migration is never edited once released (its checksum
// is recorded when applied, and a changed one refuses to start); a change is a new, higher version.
import type { PgMigration } from './migration.js'
import { MIGRATION_0001 } from './0001-trust-stores.js'
import { MIGRATION_0002 } from './0002-transparency-log.js'
import { MIGRATION_0003 } from './0003-budget-captures.js'
import { MIGRATION_0004 } from './0004-partitioned-receipts.js'
import { MIGRATION_0005 } from './0005-key-hashes.js'

export const PG_MIGRATIONS: readonly PgMigration[] = Object.freeze([MIGRATION_0001, MIGRATION_0002, MIGRATION_0003, MIGRATION_0004, MIGRATION_0005])
