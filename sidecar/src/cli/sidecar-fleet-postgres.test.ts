// A fleet on a PostgreSQL trust-control of two nodes: each sidecar joins a different node. A revocation
// made through one node reaches the sidecar of the other (its held feed request looks again every 250 ms
// for revocations other nodes commit); a max_invocations budget holds across both nodes and both
// sidecars, and so does a delegation link's for all its siblings (issue 37); every receipt is stored once
// in the shared database. Skipped where no PostgreSQL is found.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner, generateSecret } from '@gate/sdk'
import { delegatedSiblings } from '../testing/delegated-siblings.js'
import { postgresSkipReason, startPostgres } from '@gate/trust/testing'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { evaluate, FLEET_TOKEN, fleetHealth, issueCentrally, receiptIdsAtControl, revokeCentrally, startFleetSidecar, waitUntil } from '../testing/fleet.js'

const skip = postgresSkipReason()

t.test('two trust-control nodes on one database serve one fleet', { skip }, async t => {
  const dir = t.testdir()
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  const url = await server.createDatabase('gate_fleet')
  mkdirSync(join(dir, 'control'))
  writeFileSync(join(dir, 'control', 'token'), `${FLEET_TOKEN}\n`, { mode: 0o600 })
  const node = async (): Promise<GateProcess> => {
    // A heartbeat every 1.7 s makes the lease 5 s (spec 03 clamps it there): a node late with its heartbeat
    // on a loaded host does not cost the other its quorum, which would answer the budget captures 503.
    const args = ['--database-url', url, '--service-token-file', join(dir, 'control', 'token'), '--checkpoint-every', '0', '--cluster-sync-interval-ms', '1700']
    const p = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', ...args], { env: { GATE_CONTROL_TOKEN: '' } })
    t.teardown(() => p.stop('SIGKILL'))
    return p
  }
  const [a, b] = await Promise.all([node(), node()])
  // an issuer both sidecars trust, which delegates below (the nodes' authority seed stays in the database)
  const delegator = createSigner({ secret: generateSecret() })
  const trusted = ['--trusted-issuer', delegator.publicKey]
  const sidecars = [await startFleetSidecar(t, dir, 1, a!.url, trusted), await startFleetSidecar(t, dir, 2, b!.url, trusted)]
  await waitUntil('both sidecars enrolled', async () => (await Promise.all(sidecars.map(s => fleetHealth(s.url)))).every(h => h.key_enrolled))

  const capability = await issueCentrally(a!.url)
  for (const s of sidecars) t.match(await evaluate(s.url, capability), { verdict: 'allow' }, `issued through node A, allowed on ${s.url}`)
  await revokeCentrally(a!.url, capability.id)
  await waitUntil('the sidecar of node B denies the revocation made through node A', async () => (await evaluate(sidecars[1]!.url, capability)).reasonCode === 'capability_revoked')
  t.match(await evaluate(sidecars[0]!.url, capability), { verdict: 'deny', reasonCode: 'capability_revoked' }, 'and the sidecar of node A')

  const budgeted = await issueCentrally(b!.url, 4)
  const verdicts: string[] = []
  const reasons: string[] = []
  for (let i = 0; i < 6; i++) {
    const { verdict, reasonCode } = await evaluate(sidecars[i % 2]!.url, budgeted)
    verdicts.push(verdict)
    reasons.push(reasonCode === undefined ? verdict : `${verdict} (${reasonCode})`)
  }
  t.same(verdicts, ['allow', 'allow', 'allow', 'allow', 'deny', 'deny'], `four invocations across both nodes and both sidecars: ${reasons.join(', ')}`)

  // issue 37: siblings of one delegation link, presented through both nodes, share its budget
  const siblings = await delegatedSiblings({ url: a!.url, controlToken: FLEET_TOKEN, authority: delegator, grants: [{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 2 }], count: 8 })
  const sharing = await Promise.all(siblings.map((child, i) => evaluate(sidecars[i % 2]!.url, child)))
  t.equal(sharing.filter(v => v.verdict === 'allow').length, 2, "8 siblings at once through both nodes: the link's two invocations")
  t.same(sharing.filter(v => v.verdict !== 'allow').map(v => v.reasonCode), Array(6).fill('budget_exhausted'))

  await waitUntil('both outboxes drained', async () => (await Promise.all(sidecars.map(s => fleetHealth(s.url)))).every(h => h.outbox.lag === 0))
  const ids = await receiptIdsAtControl(b!.url)
  t.equal(new Set(ids).size, ids.length, 'no receipt is stored twice in the shared database')
  t.ok(ids.length >= 10, `${ids.length} receipts, the fleet's and the revocation's, read through node B`)
})
