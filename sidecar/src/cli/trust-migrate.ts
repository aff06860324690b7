// `gate trust migrate`: brings a PostgreSQL database to this binary's schema version and exits, so an
// operator can migrate before starting (or upgrading) the fleet. `gate trust serve --database-url` runs
// the same migrations at start; concurrent runs wait for each other (advisory lock). Exit 0 when the
// schema is current, 1 when the database is unreachable or refused (a newer schema, a foreign database).
import { UsageError } from '../errors.js'
import { checkDatabaseUrl, ensurePartitionsAhead, migrate, PgDatabase } from '@gate/trust/postgres'
import { parseFlags, runWithExitCodes } from './parse-flags.js'

export const TRUST_MIGRATE_USAGE = `Usage: gate trust migrate --database-url URL

Applies trust-control's PostgreSQL migrations (docs/postgres.md) and exits: each pending version in its own
transaction, recorded in gate_schema_migrations; then creates the weekly receipt partitions of the next
eight weeks (nodes whose role may not create tables cannot). Refuses a database a newer binary migrated, one whose
applied migrations differ from this binary's, and one holding Gate's tables without the migrations table.

Options:
  --database-url URL    postgres://user:password@host:port/database (or GATE_DATABASE_URL, which keeps the
                        password off argv)
  -h, --help            show this help`

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes('trust migrate', TRUST_MIGRATE_USAGE, async () => {
    const { values } = parseFlags(argv, { 'database-url': { type: 'string' } })
    if (values.help === true) {
      process.stdout.write(TRUST_MIGRATE_USAGE + '\n')
      return 0
    }
    const envUrl = process.env.GATE_DATABASE_URL
    const url = (values['database-url'] as string | undefined) ?? (envUrl === '' ? undefined : envUrl)
    if (url === undefined) throw new UsageError('--database-url URL (or GATE_DATABASE_URL) is required')
    try {
      checkDatabaseUrl(url, '--database-url')
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
    const db = new PgDatabase({ url, poolSize: 1, applicationName: 'gate trust migrate' })
    try {
      const result = await migrate(db)
      const applied = result.applied.length === 0 ? 'nothing to apply' : `applied ${result.applied.join(', ')}`
      process.stdout.write(`gate trust migrate: ${db.location} is at schema version ${result.version} (${applied})\n`)
      // nodes running with data privileges only cannot create the weekly receipt partitions themselves
      const through = await ensurePartitionsAhead(db)
      process.stdout.write(`gate trust migrate: receipt partitions ready through ${new Date(through * 1000).toISOString().slice(0, 10)}\n`)
      return 0
    } finally {
      await db.close()
    }
  })
}
