// `npm run postgres -- [--listen 127.0.0.1:PORT] [--url-file PATH]`: a throwaway PostgreSQL for a
// developer trying `gate trust serve --database-url` (README, docs/postgres.md). The same server the tests
// start (postgres-server.ts: the Debian `postgresql` package's binaries, a fresh data directory, password
// authentication on loopback only), with one database `gate`. Its URL, password included, goes to a file
// of mode 0600 (default .gate/postgres.url), never to the terminal. The file appears whole (written
// aside, then renamed) and only once the database accepts connections, and an old one is removed at
// the start: a reader who started this in the background waits for the file (README). It runs until
// SIGINT or SIGTERM, then stops the server and deletes the data directory: nothing outlives it.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { startPostgres } from './postgres-server.js'

const USAGE = `Usage: npm run postgres -- [--listen 127.0.0.1:PORT] [--url-file PATH]

Starts a throwaway PostgreSQL on loopback (fresh data directory, deleted when stopped) with a database
"gate", writes its URL to PATH (default .gate/postgres.url, mode 0600) and runs until Ctrl-C or SIGTERM.
Needs the PostgreSQL server binaries: the Debian postgresql package (apt-get install postgresql), or
GATE_PG_BIN naming the directory that holds initdb and postgres.`

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { listen: { type: 'string' }, 'url-file': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true })
  if (values.help === true) {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  const listen = /^127\.0\.0\.1:([1-9][0-9]{0,4})$/.exec(values.listen ?? '127.0.0.1:5433')
  if (listen === null || Number(listen[1]) > 65535) {
    process.stderr.write(`--listen must be 127.0.0.1:PORT (loopback only: this server is for development)\n\n${USAGE}\n`)
    return 2
  }
  const urlFile = values['url-file'] ?? '.gate/postgres.url'
  // a file left by a run that was killed must not pass for this one's
  rmSync(urlFile, { force: true })
  const server = await startPostgres({ port: Number(listen[1]), own: true })
  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= server.destroy().finally(() => rmSync(urlFile, { force: true }))
    return stopping
  }
  process.once('SIGINT', () => void stop().then(() => process.exit(0)))
  process.once('SIGTERM', () => void stop().then(() => process.exit(0)))
  try {
    const admin = new pg.Client({ connectionString: server.url('postgres') })
    await admin.connect()
    try {
      await admin.query('CREATE DATABASE gate')
    } finally {
      await admin.end()
    }
    mkdirSync(dirname(urlFile), { recursive: true })
    // written aside (a new file: mode 0600) and renamed: a waiting reader never sees it half written
    const aside = `${urlFile}.${process.pid}.tmp`
    writeFileSync(aside, server.url('gate') + '\n', { mode: 0o600 })
    renameSync(aside, urlFile)
  } catch (err) {
    await stop()
    throw err
  }
  process.stdout.write(`PostgreSQL listening on 127.0.0.1:${server.port}, database "gate"; its URL is in ${urlFile} (GATE_DATABASE_URL). Ctrl-C stops it and deletes its data.\n`)
  return new Promise<number>(() => undefined)
}

main(process.argv.slice(2)).then(
  code => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`postgres: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  },
)
