// When the PostgreSQL tests run, skip or fail: they skip only where no server can be found outside CI.
import t from 'tap'
import { join } from 'node:path'
import { findPostgresBin, postgresSkipReason } from './postgres-server.js'

const dir = t.testdir({
  debian: {
    '13': { bin: { initdb: '', postgres: '' } },
    '15': { bin: { initdb: '', postgres: '' } },
    // a version directory without the server (only the client package installed)
    '16': { bin: { psql: '' } },
  },
  empty: {},
})
const root = join(dir, 'debian')
const empty = join(dir, 'empty')

t.test('the newest Debian version with a server is found; GATE_PG_BIN takes precedence', async t => {
  t.equal(findPostgresBin({}, root), join(root, '15', 'bin'))
  t.equal(findPostgresBin({ GATE_PG_BIN: join(root, '13', 'bin') }, root), join(root, '13', 'bin'))
  t.equal(findPostgresBin({}, join(empty, 'absent')), undefined)
  t.equal(postgresSkipReason({}, root), undefined)
})

t.test('outside CI, no server anywhere skips with how to get one', async t => {
  t.match(postgresSkipReason({}, empty), /no PostgreSQL found .*apt-get install postgresql.*GATE_PG_BIN or GATE_TEST_DATABASE_URL/)
  t.equal(postgresSkipReason({ GATE_TEST_DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/postgres' }, empty), undefined, 'a server of your own counts')
})

t.test('in CI, or with a GATE_PG_BIN that names no server, a missing server fails instead of skipping', async t => {
  t.throws(() => postgresSkipReason({ CI: 'true' }, empty), /CI requires PostgreSQL/)
  t.throws(() => postgresSkipReason({ GATE_PG_BIN: join(empty, 'nowhere') }, root), /GATE_PG_BIN=.* holds no initdb/)
})
