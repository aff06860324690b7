// The fleet client checks every answer it reads against its gate.fleet.* schema: a trust-control (or
// anything at its URL) that answers another shape is not believed. A real HTTP server on 127.0.0.1:0
// plays trust-control, answering each path with the body the test gives it.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AuthorityFollower } from './authority-follower.js'
import { ControlConnection } from './control-connection.js'
import { createRemoteBudgets } from './remote-budgets.js'

const KEY = 'ab'.repeat(32)

async function fakeControl(t: Test, answers: Record<string, unknown>): Promise<ControlConnection> {
  const server: Server = createServer((req, res) => {
    req.resume()
    const body = JSON.stringify(answers[new URL(req.url ?? '/', 'http://x').pathname] ?? { error: 'gate_not_found', message: 'no route' })
    res.writeHead(answers[new URL(req.url ?? '/', 'http://x').pathname] === undefined ? 404 : 200, { 'content-type': 'application/json' })
    res.end(body)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  const connection = new ControlConnection({ url: new URL(`http://127.0.0.1:${port}`), token: 't'.repeat(32), ca: undefined })
  t.teardown(() => {
    connection.close()
    server.close()
  })
  return connection
}

t.test('an answer of the message schema is read; another shape rejects as unreachable', async t => {
  const authority = { publicKey: KEY, generation: 2, rotatedAt: 1, trustedPublicKeys: [KEY], trustedKeyCount: 1 }
  const connection = await fakeControl(t, { '/v1/authority': authority, '/v1/keys': { keys: [{ publicKey: KEY }] } })
  t.same(await connection.expectMessage('gate.fleet.authority.v1', connection.get('/v1/authority', 5000)), authority)
  await t.rejects(connection.expectMessage('gate.fleet.key_list.v1', connection.get('/v1/keys', 5000)), {
    name: 'ControlUnreachableError',
    code: 'gate_store_unavailable',
    message: /not a gate\.fleet\.key_list\.v1: \/keys\/0: must have required property 'label'/,
  })
})

t.test('an authority answer of another shape is not followed', async t => {
  const connection = await fakeControl(t, { '/v1/authority': { publicKey: KEY, generation: '2', trustedPublicKeys: [KEY] } })
  const follower = new AuthorityFollower(connection, () => undefined)
  await t.rejects(follower.follow(), /not a gate\.fleet\.authority\.v1/)
  t.same(follower.trustedKeys(), [], 'no key is trusted')
})

t.test('a capture answered with another shape is unavailable: the budgeted call is denied', async t => {
  const plan = { invocations: [{ owner: 'cap_1', key: '0:POST /pets', max: 3, fixedMax: false, kind: 'grant' as const }], costs: [] }
  const wrong = await fakeControl(t, { '/v1/budgets/capture': { allowed: true, used: ['1'] } })
  t.match(await createRemoteBudgets(wrong).capture(plan), { allowed: false, failed: { kind: 'unavailable', reason: /not a gate\.fleet\.capture_result\.v1/ } })
  const right = await fakeControl(t, { '/v1/budgets/capture': { allowed: true, used: [1], costUnits: [] } })
  t.same(await createRemoteBudgets(right).capture(plan), { allowed: true, used: [1], costUnits: [] })
})
