// Sidecars in a fleet (issue 30): one real `gate trust serve` and three real `gate sidecar` processes
// connected with --control-url. A capability issued centrally verifies on every sidecar; revoked
// centrally, it is denied by all three (the time until the last denies, over 100 revocations, is printed
// as a diagnostic: p50/p99, never asserted); every acknowledged receipt reaches trust-control exactly
// once; a max_invocations budget holds across the fleet; /gate/health says revocation_backend remote.
import t from 'tap'
import { schemaErrors, call } from '../testing/http-client.js'
import { evaluate, FLEET_TOKEN, fleetHealth, issueCentrally, receiptIdsAtControl, revokeCentrally, startFleetSidecar, startTrustControl, waitUntil } from '../testing/fleet.js'

t.test('three sidecars honour central issuance, revocation and budgets, and ship every receipt once', async t => {
  const dir = t.testdir()
  const control = await startTrustControl(t, dir)
  const sidecars = await Promise.all([1, 2, 3].map(n => startFleetSidecar(t, dir, n, control.url)))
  const acknowledged: string[] = []
  const record = async (url: string, capability?: Parameters<typeof evaluate>[1]) => {
    const v = await evaluate(url, capability)
    acknowledged.push(v.receiptId)
    return v
  }

  const health = (await call(`${sidecars[0]!.url}/gate/health`)).body as Record<string, unknown>
  t.equal(health.revocation_backend, 'remote', 'revocation_backend reads remote')
  t.same(schemaErrors('gate.http.health.v1', health), [], 'the health body still matches its schema')
  await waitUntil('every sidecar enrolled its key', async () => (await Promise.all(sidecars.map(s => fleetHealth(s.url)))).every(h => h.key_enrolled))

  const latencies: number[] = []
  const wrong: string[] = []
  for (let round = 0; round < 100; round++) {
    const capability = await issueCentrally(control.url)
    for (const s of sidecars) {
      const v = await record(s.url, capability)
      if (v.verdict !== 'allow') wrong.push(`round ${round}: ${s.url} answered ${v.verdict} (${v.reasonCode}) before the revocation`)
    }
    const started = performance.now()
    await revokeCentrally(control.url, capability.id)
    const denied = await Promise.all(
      sidecars.map(async s => {
        for (;;) {
          const v = await record(s.url, capability)
          if (v.verdict === 'deny') return v
        }
      }),
    )
    latencies.push(performance.now() - started)
    for (const v of denied) if (v.reasonCode !== 'capability_revoked') wrong.push(`round ${round}: denied with ${v.reasonCode}`)
  }
  t.same(wrong, [], '100 capabilities issued centrally: allowed on all three sidecars, then denied as capability_revoked by all three')
  latencies.sort((a, b) => a - b)
  t.comment(`revocation until all three sidecars deny, 100 revocations: p50 ${latencies[49]!.toFixed(1)} ms, p99 ${latencies[98]!.toFixed(1)} ms, max ${latencies[99]!.toFixed(1)} ms`)

  // a rotation at trust-control is followed: a token signed with the new key verifies everywhere
  const rotated = await call(`${control.url}/v1/authority`, { method: 'POST', headers: { authorization: `Bearer ${FLEET_TOKEN}` } })
  t.equal(rotated.status, 200, 'trust-control rotated its authority key')
  const afterRotation = await issueCentrally(control.url)
  await waitUntil('every sidecar follows the rotation', async () => (await Promise.all(sidecars.map(s => fleetHealth(s.url)))).every(h => h.authority?.generation === 2))
  for (const s of sidecars) t.equal((await record(s.url, afterRotation)).verdict, 'allow', `a token of the rotated key is allowed on ${s.url}`)

  // max_invocations: 5 across the fleet, spent round-robin on three hosts
  const budgeted = await issueCentrally(control.url, 5)
  const verdicts: string[] = []
  for (let i = 0; i < 9; i++) verdicts.push((await record(sidecars[i % 3]!.url, budgeted)).verdict)
  t.same(verdicts, ['allow', 'allow', 'allow', 'allow', 'allow', 'deny', 'deny', 'deny', 'deny'], 'five invocations in the whole fleet, whichever host serves them')
  t.equal((await record(sidecars[0]!.url)).verdict, 'allow', 'a request presenting no capability is served')

  await waitUntil('every outbox drained', async () => (await Promise.all(sidecars.map(s => fleetHealth(s.url)))).every(h => h.outbox.lag === 0))
  const stored = await receiptIdsAtControl(control.url)
  const counts = new Map<string, number>()
  for (const id of stored) counts.set(id, (counts.get(id) ?? 0) + 1)
  t.equal(acknowledged.filter(id => counts.get(id) !== 1).length, 0, `each of the ${acknowledged.length} acknowledged receipts is at trust-control exactly once`)
  t.equal(stored.length, counts.size, 'no receipt is stored twice')
  const metrics = await call(`${sidecars[0]!.url}/gate/metrics`, { headers: { authorization: `Bearer ${FLEET_TOKEN}` } })
  t.match(metrics.text, /^gate_fleet_outbox_lag 0$/m, 'the outbox lag is a metric too')
  t.match(metrics.text, /^gate_fleet_revocations_stale 0$/m)
  t.equal(await sidecars[0]!.stop('SIGTERM'), 0, 'SIGTERM stops a connected sidecar (its fleet loops end)')
  await control.stop('SIGKILL')
  t.equal(await sidecars[1]!.stop('SIGTERM'), 0, 'and one whose trust-control is gone')
})
