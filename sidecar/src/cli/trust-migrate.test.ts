// gate trust migrate, and gate trust serve's PostgreSQL flags: migrations alone, refusals, usage errors
// (exit 2), an unreachable database at start (exit 1, a clear message without the password), and
// GATE_DATABASE_URL.
import t from 'tap'
import { join } from 'node:path'
import { call } from '../testing/http-client.js'
import { postgresSkipReason, startPostgres, type PostgresServer } from '@gate/trust/testing'
import { runGate, spawnGate } from '../testing/spawn-gate.js'
import { PgDatabase } from '@gate/trust/postgres'

const skip = postgresSkipReason()
const TOKEN = 'migrate-service-token-0123456789abcdef'
const dir = t.testdir({ token: TOKEN })
const noEnv = { GATE_CONTROL_TOKEN: '', GATE_DATABASE_URL: '' }
let server!: PostgresServer

t.before(async () => {
  if (skip !== undefined) return
  server = await startPostgres()
  t.teardown(() => server.destroy())
})

t.test('gate trust migrate applies each version once, and refuses a newer schema', { skip }, async t => {
  const url = await server.createDatabase('gate_migrate')
  const first = await runGate(['trust', 'migrate', '--database-url', url], { env: noEnv })
  t.equal(first.code, 0, first.stderr)
  t.match(first.stdout, /is at schema version 5 \(applied 1, 2, 3, 4, 5\)/)
  t.notMatch(first.stdout + first.stderr, new URL(url).password, 'never prints the password')
  const again = await runGate(['trust', 'migrate'], { env: { ...noEnv, GATE_DATABASE_URL: url } })
  t.equal(again.code, 0)
  t.match(again.stdout, /schema version 5 \(nothing to apply\)/)
  const db = new PgDatabase({ url })
  await db.run("INSERT INTO gate_schema_migrations (version, name, checksum) VALUES (6, 'later', 'x')")
  await db.close()
  const newer = await runGate(['trust', 'migrate', '--database-url', url], { env: noEnv })
  t.equal(newer.code, 1)
  t.match(newer.stderr, /schema version 6 \(later\), newer than this binary knows \(5\)/)
  const serve = await runGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--database-url', url, '--service-token-file', join(dir, 'token')], { env: noEnv })
  t.equal(serve.code, 1, 'gate trust serve refuses it too')
  t.match(serve.stderr, /newer than this binary knows/)
  const usage = await runGate(['trust', 'migrate'], { env: noEnv })
  t.equal(usage.code, 2)
  t.match(usage.stderr, /--database-url URL \(or GATE_DATABASE_URL\) is required/)
})

t.test('gate trust serve with PostgreSQL: usage errors exit 2, an unreachable database exits 1', { skip }, async t => {
  const url = server.url('postgres')
  const token = ['--service-token-file', join(dir, 'token')]
  const unreachable = url.replace(`:${server.port}/`, ':1/')
  const cases: [string[], number, RegExp][] = [
    [['--database-url', url, '--receipt-db', join(dir, 'r.db'), ...token], 2, /--receipt-db and --database-url are mutually exclusive/],
    [['--database-url', url, '--authority-db', join(dir, 'a.db'), ...token], 2, /--authority-db is a SQLite store: with --database-url every store is in the database/],
    [['--receipt-db', join(dir, 'r.db'), '--cluster-peer', 'http://127.0.0.1:9', ...token], 2, /--cluster-peer needs --database-url/],
    [['--database-url', 'mysql://host/db', ...token], 2, /--database-url must be a postgres:\/\/ or postgresql:\/\/ URL/],
    [['--database-url', url, '--cluster-peer', 'not a url', ...token], 2, /--cluster-peer must be an http\(s\) URL/],
    [['--database-url', url, '--cluster-sync-interval-ms', '0', ...token], 2, /--cluster-sync-interval-ms must be a positive integer/],
    [['--database-url', unreachable, '--listen', '127.0.0.1:0', ...token], 1, /database store postgres:\/\/gate:\*\*\*@127\.0\.0\.1:1\/postgres is unavailable: .*ECONNREFUSED/],
  ]
  for (const [args, code, message] of cases) {
    const r = await runGate(['trust', 'serve', ...args], { env: noEnv })
    t.equal(r.code, code, args.join(' '))
    t.match(r.stderr, message)
    t.notMatch(r.stderr + r.stdout, new URL(url).password, 'never prints the database password')
    t.notMatch(r.stderr + r.stdout, TOKEN)
  }
})

t.test('GATE_DATABASE_URL selects PostgreSQL and keeps the password off argv', { skip }, async t => {
  const url = await server.createDatabase('gate_env')
  const serve = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--service-token-file', join(dir, 'token')], { env: { ...noEnv, GATE_DATABASE_URL: url } })
  t.teardown(() => serve.stop('SIGKILL'))
  t.match(serve.output(), /receipts: postgres postgres:\/\/gate:\*\*\*@127\.0\.0\.1:\d+\/gate_env_[0-9a-f]+ \(schema version 5, applied 1, 2, 3, 4, 5 now\)/)
  t.notMatch(serve.output(), new URL(url).password)
  const health = await call(`${serve.url}/health`)
  t.match(health.body, { clustered: true, cluster: { selfUrl: serve.url, hasQuorum: true, role: 'leader' }, stores: { healthy: true } })
  t.equal(await serve.stop('SIGTERM'), 0, 'a graceful stop')
})
