// A starting `gate trust serve` binds its port before its routes are mounted (a node's cluster id is the
// URL it bound, and its first heartbeat comes before the routes): in that window every request answers
// 503, never 404. The window is held open by the test: a lock on the heartbeat table keeps the node's
// first heartbeat, and so its start, waiting until the test lets go.
import t from 'tap'
import { join } from 'node:path'
import { createSigner } from '@gate/sdk'
import { openPgStores } from '@gate/trust/postgres'
import { postgresSkipReason, startPostgres } from '@gate/trust/testing'
import { freeLoopbackPort } from '../testing/debian-server.js'
import { call } from '../testing/http-client.js'
import { spawnGate, waitForOutput } from '../testing/spawn-gate.js'

const skip = postgresSkipReason()
const TOKEN = 'starting-service-token-0123456789abcdef'

t.test('a node that listens before its routes exist answers 503 until they are mounted', { skip }, async t => {
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  const url = await server.createDatabase('gate_starting')
  const stores = await openPgStores({ url, derivePublicKey: s => createSigner({ secret: s }).publicKey })
  t.teardown(() => stores.close())
  const dir = t.testdir({ token: TOKEN })

  let release!: () => void
  const released = new Promise<void>(resolve => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>(resolve => (locked = resolve))
  const holder = stores.db.withClient(async client => {
    await client.query('BEGIN')
    // blocks the heartbeat's upsert, the last step before the routes are mounted
    await client.query('LOCK TABLE cluster_nodes IN SHARE MODE')
    locked()
    await released
    await client.query('COMMIT')
  })
  await isLocked

  const port = await freeLoopbackPort()
  const node = await spawnGate(['trust', 'serve', '--listen', `127.0.0.1:${port}`, '--database-url', url, '--service-token-file', join(dir, 'token'), '--checkpoint-every', '0'], {
    env: { GATE_CONTROL_TOKEN: '' },
    readyPattern: /starting: bound (http:\/\/\S+);/,
  })
  t.teardown(() => node.stop('SIGKILL'))
  const auth = { authorization: `Bearer ${TOKEN}` }
  for (const [path, options] of [
    ['/health', {}],
    ['/v1/receipts/query?limit=1', { headers: auth }],
    ['/v1/revocations?cursor=0', { headers: auth }],
    ['/no/such/route', {}],
  ] as const) {
    const r = await call(`${node.url}${path}`, options)
    t.equal(r.status, 503, `${path} answers 503 while the node starts`)
    t.same(Object.keys(r.body as object), ['error'])
    t.match((r.body as { error: string }).error, /starting/)
  }
  const post = await call(`${node.url}/v1/revocations`, { body: { capabilityId: 'cap-early' }, headers: auth })
  t.equal(post.status, 503, 'a write answers 503 too, and is not made')

  release()
  await holder
  await waitForOutput(node, /listening on http:\/\//)
  t.equal((await call(`${node.url}/health`)).status, 200, 'ready: /health answers 200')
  t.equal((await call(`${node.url}/v1/receipts/query?limit=1`, { headers: auth })).status, 200)
  t.equal((await call(`${node.url}/no/such/route`)).status, 404, 'an unknown route is 404 once the routes are mounted')
  t.notOk((await stores.revocations.list()).some(r => r.capabilityId === 'cap-early'), 'the early write left nothing behind')
})
