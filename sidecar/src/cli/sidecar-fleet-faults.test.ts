// Fleet faults (issue 30): trust-control killed -9 and restarted under load, the network to it cut (a
// refused port) and restored, and a sidecar killed -9 with receipts in its outbox. After recovery every
// receipt a client was answered with is at trust-control exactly once, and a capability revoked during
// the cut is never honoured by a request sent after the staleness bound. Also: budgeted calls are denied
// while trust-control is unreachable (the rest is served), and a refused control token stops the start.
import t from 'tap'
import type { CapabilityToken } from '@gate/sdk'
import { startTcpRelay } from '../testing/tcp-relay.js'
import { evaluate, fleetHealth, issueCentrally, receiptIdsAtControl, revokeCentrally, startFleetSidecar, startTrustControl, waitUntil } from '../testing/fleet.js'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'

const STALENESS_MS = 2000

t.test('kill -9 and restart of trust-control, a cut network and a sidecar kill -9 lose no receipt and honour no stale revocation', async t => {
  const dir = t.testdir()
  let control = await startTrustControl(t, dir)
  const relay = await startTcpRelay(Number(new URL(control.url).port))
  t.teardown(() => relay.close())
  const flags = ['--max-revocation-staleness', String(STALENESS_MS / 1000)]
  const sidecars: GateProcess[] = await Promise.all([1, 2, 3].map(n => startFleetSidecar(t, dir, n, relay.url, flags)))
  await waitUntil('every sidecar enrolled its key', async () => (await Promise.all(sidecars.map(s => fleetHealth(s.url)))).every(h => h.key_enrolled))
  const steady = await issueCentrally(control.url)
  const doomed = await issueCentrally(control.url)

  // load: every sidecar, with the steady capability, the doomed one and none, until told to stop
  const acknowledged: string[] = []
  const doomedAllows: { sentAt: number; sidecar: number }[] = []
  let running = true
  const load = sidecars.map(async (_, i) => {
    while (running) {
      for (const capability of [steady, doomed, undefined] as (CapabilityToken | undefined)[]) {
        const sentAt = performance.now()
        try {
          const v = await evaluate(sidecars[i]!.url, capability)
          acknowledged.push(v.receiptId)
          if (capability === doomed && v.verdict === 'allow') doomedAllows.push({ sentAt, sidecar: i })
        } catch {
          // the sidecar is down (killed below): nothing was acknowledged
        }
      }
    }
  })
  const shipped = async () => (await Promise.all(sidecars.map(s => fleetHealth(s.url)))).every(h => h.outbox.lag === 0)

  // 1. trust-control killed -9 under load, restarted on the same database at a new port
  await waitUntil('receipts shipped under load', async () => (await receiptIdsAtControl(control.url)).length > 30)
  await control.stop('SIGKILL')
  await waitUntil('an outbox fills while trust-control is down', async () => (await fleetHealth(sidecars[0]!.url)).outbox.lag > 0)
  control = await startTrustControl(t, dir)
  relay.retarget(Number(new URL(control.url).port))
  await waitUntil('receipts ship again after the restart', async () => (await receiptIdsAtControl(control.url)).length > 60)

  // 2. the network cut: the port refuses; the doomed capability is revoked where no sidecar can see it
  await relay.cut()
  const revokedAt = performance.now()
  await revokeCentrally(control.url, doomed.id)
  await waitUntil('an outbox fills behind the cut', async () => (await fleetHealth(sidecars[1]!.url)).outbox.lag > 0)
  for (const [i, s] of sidecars.entries()) {
    await waitUntil(`sidecar ${i + 1} denies capabilities once its revocations are stale`, async () => (await evaluate(s.url, steady)).reasonCode === 'revocation_state_stale')
  }
  t.equal((await evaluate(sidecars[0]!.url)).verdict, 'allow', 'a request presenting no capability is still served behind the cut')

  // 3. sidecar 2 killed -9 with receipts in its outbox, restarted on the same store while the cut lasts
  const lag = (await fleetHealth(sidecars[1]!.url)).outbox.lag
  t.ok(lag > 0, `sidecar 2 is killed with ${lag} receipt(s) in its outbox`)
  await sidecars[1]!.stop('SIGKILL')
  sidecars[1] = await startFleetSidecar(t, dir, 2, relay.url, flags)

  // 4. the network restored: the revocation arrives everywhere, and every outbox drains
  await relay.restore()
  for (const [i, s] of sidecars.entries()) {
    await waitUntil(`sidecar ${i + 1} denies the revoked capability as revoked`, async () => (await evaluate(s.url, doomed)).reasonCode === 'capability_revoked')
  }
  running = false
  await Promise.all(load)
  await waitUntil('every outbox drained', shipped)

  const late = doomedAllows.filter(a => a.sentAt > revokedAt + STALENESS_MS)
  t.same(late, [], 'no request sent after the staleness bound was allowed with the revoked capability')
  const stored = await receiptIdsAtControl(control.url)
  const counts = new Map<string, number>()
  for (const id of stored) counts.set(id, (counts.get(id) ?? 0) + 1)
  t.ok(acknowledged.length > 100, `${acknowledged.length} receipts acknowledged under load`)
  t.same(acknowledged.filter(id => counts.get(id) !== 1), [], 'each acknowledged receipt is at trust-control exactly once')
  t.equal(stored.length, counts.size, 'no receipt is stored twice')
})

t.test('an unreachable trust-control denies budgeted calls and serves the rest', async t => {
  const dir = t.testdir()
  const control = await startTrustControl(t, dir)
  const relay = await startTcpRelay(Number(new URL(control.url).port))
  t.teardown(() => relay.close())
  const sidecar = await startFleetSidecar(t, dir, 1, relay.url, ['--max-revocation-staleness', '600'])
  const budgeted = await issueCentrally(control.url, 100)
  const unbudgeted = await issueCentrally(control.url)
  t.equal((await evaluate(sidecar.url, budgeted)).verdict, 'allow', 'a budgeted call is allowed while trust-control answers')
  await relay.cut()
  t.match(await evaluate(sidecar.url, budgeted), { verdict: 'deny', reasonCode: 'budget_authority_unreachable' }, 'denied: its budget cannot be captured')
  t.match(await evaluate(sidecar.url, unbudgeted), { verdict: 'allow' }, 'a capability without a budget is allowed within the staleness bound')
  t.match(await evaluate(sidecar.url), { verdict: 'allow' }, 'a request presenting no capability is served')
  await relay.restore()
  t.match(await evaluate(sidecar.url, budgeted), { verdict: 'allow' }, 'allowed again once trust-control answers')
})

t.test('a control token trust-control refuses stops the start', async t => {
  const dir = t.testdir()
  const control = await startTrustControl(t, dir)
  const start = spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--control-url', control.url], { env: { GATE_CONTROL_TOKEN: 'not-the-fleet-token-0123456789' } })
  await t.rejects(start, /refused the control token \(401\)/, 'the sidecar exits instead of serving without the fleet')
})
