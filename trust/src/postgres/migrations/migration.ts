// The shape of one PostgreSQL migration (pg-migrations.ts applies them), apart from the runner so the
// migrations and the runner do not import each other.

/** One numbered migration. */
export interface PgMigration {
  version: number
  name: string
  /** Run in order in one transaction. */
  statements: readonly string[]
}
