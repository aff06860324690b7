// A delegated budget holds across siblings through a fleet's shared budgets (issue 37, point 3): one
// real `gate trust serve` (SQLite) whose authority delegates a capability to an agent, and three real
// `gate sidecar` processes joined with --control-url. The agent's sibling children, presented on any
// sidecar, one at a time or all at once, are allowed the link's max_invocations and max_total_cost once
// in all: every capture goes to trust-control, which captures the link's counters with the token's own.
import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { ToolGrant } from '@gate/sdk'
import { delegatedSiblings, signerOfSeedFile } from '../testing/delegated-siblings.js'
import { evaluate, FLEET_TOKEN, fleetHealth, startFleetSidecar, startTrustControl, waitUntil } from '../testing/fleet.js'
import { runGate } from '../testing/spawn-gate.js'

t.test("three sidecars of one fleet allow a link's budgets once for all its siblings", async t => {
  const dir = t.testdir()
  mkdirSync(join(dir, 'control'))
  const seed = join(dir, 'control', 'authority-seed')
  t.equal((await runGate(['keygen', seed])).code, 0, 'gate keygen')
  const control = await startTrustControl(t, dir, ['--authority-seed-file', seed])
  const sidecars = await Promise.all([1, 2, 3].map(n => startFleetSidecar(t, dir, n, control.url)))
  await waitUntil('every sidecar follows the authority', async () => (await Promise.all(sidecars.map(s => fleetHealth(s.url)))).every(h => h.authority !== null))
  const siblings = (grants: ToolGrant[], count: number) => delegatedSiblings({ url: control.url, controlToken: FLEET_TOKEN, authority: signerOfSeedFile(seed), grants, count })

  const one = await siblings([{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 1 }], 6)
  const verdicts: string[] = []
  for (const [i, child] of one.entries()) {
    const v = await evaluate(sidecars[i % 3]!.url, child)
    verdicts.push(v.reasonCode === undefined ? v.verdict : `${v.verdict} ${v.reasonCode}`)
  }
  t.same(verdicts, ['allow', ...Array(5).fill('deny budget_exhausted')], 'six siblings on three sidecars: one invocation in all')

  const four = await siblings([{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 4 }], 18)
  const concurrent = await Promise.all(four.map((child, i) => evaluate(sidecars[i % 3]!.url, child)))
  t.equal(concurrent.filter(v => v.verdict === 'allow').length, 4, "18 siblings at once on three sidecars: exactly the link's four")
  t.same(concurrent.filter(v => v.verdict !== 'allow').map(v => v.reasonCode), Array(14).fill('budget_exhausted'))

  const capped = await siblings([{ server_id: 'http', tool_name: 'POST /pets', max_total_cost: { units: 100, currency: 'EUR' } }], 8)
  const cost = { governed_intent: { max_amount: { units: 30, currency: 'EUR' } } }
  const charged = await Promise.all(capped.map((child, i) => evaluate(sidecars[i % 3]!.url, child, cost)))
  t.equal(charged.filter(v => v.verdict === 'allow').length, 3, "8 siblings charging 30 at once: three fit the link's 100")
  t.same(charged.filter(v => v.verdict !== 'allow').map(v => v.reasonCode), Array(5).fill('total_cost_exceeded'))
})
