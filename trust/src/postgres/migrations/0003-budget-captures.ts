// Migration 3: budget captures by id. A fleet's sidecar names each capture it sends; trust-control records
// the id with the capture (in the capture's transaction), so a retry answers the first result and a
// cancel (the sidecar gave up waiting) gives the counters back, or, arriving first, refuses the capture
// when it lands. `plan` and `result` are the capture's JSON; both are null for a cancellation recorded
// before any capture. Rows older than CAPTURE_ID_RETENTION_SECONDS are deleted.
import type { PgMigration } from './migration.js'

export const MIGRATION_0003: PgMigration = {
  version: 3,
  name: 'budget-captures',
  statements: [
    `CREATE TABLE budget_captures (
      capture_id text PRIMARY KEY,
      state text NOT NULL CHECK (state IN ('captured', 'cancelled')),
      plan text,
      result text,
      created_at bigint NOT NULL
    )`,
    'CREATE INDEX budget_captures_by_time ON budget_captures (created_at)',
  ],
}
