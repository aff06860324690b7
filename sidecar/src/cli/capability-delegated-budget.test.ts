// A delegated budget holds across siblings (issue 37, point 3), against the real processes. The
// authority delegates a capability to agent B with `max_invocations: 1`; B signs sibling children, each
// `max_invocations: 1`, with ids of its choosing. Counted per token id, every sibling had a budget of its
// own; a link's limits now bound the sum over all its descendants, so exactly one sibling is allowed,
// the rest denied by BudgetGuard (`budget_exhausted`), on `gate sidecar`, `gate api protect` (the
// upstream sees one request) and `gate mcp serve` (max_total_cost across siblings' tool calls), and
// under concurrent calls.
import t, { type Test } from 'tap'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ANONYMOUS_CALLER, type CapabilityToken, type ToolGrant } from '@gate/sdk'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { delegatedSiblings, signerOfSeedFile } from '../testing/delegated-siblings.js'
import { evaluate } from '../testing/fleet.js'
import { gateFiles } from '../testing/gate-files.js'
import { call } from '../testing/http-client.js'
import { startGateMcp } from '../testing/mcp-session.js'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { startUpstreamApp } from '../testing/upstream-app.js'

const TOKEN = 'delegated-budget-control-token-0123'
const now = () => Math.floor(Date.now() / 1000)
const header = (token: CapabilityToken) => Buffer.from(JSON.stringify(token)).toString('base64url')

/** `count` children an agent signs under one link of the service's authority delegating `grants`. */
function siblings(url: string, seed: string, grants: ToolGrant[], count: number): Promise<CapabilityToken[]> {
  return delegatedSiblings({ url, controlToken: TOKEN, authority: signerOfSeedFile(seed), grants, count })
}

async function startSidecar(t: Test): Promise<{ gate: GateProcess; seed: string }> {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  return { gate, seed }
}

const ONE_POST: ToolGrant[] = [{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 1 }]

t.test('gate sidecar: five siblings of a max_invocations 1 link are allowed once in all', async t => {
  const { gate, seed } = await startSidecar(t)
  const children = await siblings(gate.url, seed, ONE_POST, 5)
  t.equal(new Set(children.map(c => c.id)).size, 5, 'five children, five ids of the delegatee\'s choosing')
  const answers = []
  for (const child of children) answers.push(await evaluate(gate.url, child))
  t.same(answers.map(a => a.verdict), ['allow', 'deny', 'deny', 'deny', 'deny'], 'one invocation for the whole link')
  t.same(answers.slice(1).map(a => a.reasonCode), Array(4).fill('budget_exhausted'), 'the rest: the budget deny')
  const denied = await call(`${gate.url}/gate/evaluate`, {
    body: { request_id: 'r-delegated-budget', method: 'POST', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: now(), body_hash: null },
    headers: { 'x-gate-capability': header(children[4]!) },
  })
  t.match(denied.body, { verdict: { verdict: 'deny', guard: 'BudgetGuard', reason: /delegation_chain\[0\]/ } }, 'the deny names the link whose budget is spent')
})

t.test('gate sidecar: max_total_cost of a link bounds what all its siblings charge', async t => {
  const { gate, seed } = await startSidecar(t)
  const grants: ToolGrant[] = [{ server_id: 'http', tool_name: 'POST /pets', max_cost_per_invocation: { units: 60, currency: 'USD' }, max_total_cost: { units: 100, currency: 'USD' } }]
  const [a, b, c] = await siblings(gate.url, seed, grants, 3)
  const cost = (units: number) => ({ governed_intent: { max_amount: { units, currency: 'USD' } } })
  t.match(await evaluate(gate.url, a, cost(60)), { verdict: 'allow' }, 'sibling a charges 60 of the link\'s 100')
  t.match(await evaluate(gate.url, b, cost(60)), { verdict: 'deny', reasonCode: 'total_cost_exceeded' }, 'sibling b\'s 60 would bring the link to 120')
  t.match(await evaluate(gate.url, c, cost(40)), { verdict: 'allow' }, 'sibling c\'s 40 fits: 100 in all')
  t.match(await evaluate(gate.url, b, cost(1)), { verdict: 'deny', reasonCode: 'total_cost_exceeded' }, 'and nothing more, from any sibling')
  t.match(await evaluate(gate.url, b, cost(61)), { verdict: 'deny', reasonCode: 'cost_exceeds_grant' }, 'max_cost_per_invocation stays per call')
})

t.test('gate sidecar: concurrent calls with twelve siblings of a max_invocations 3 link never over-spend', async t => {
  const { gate, seed } = await startSidecar(t)
  const children = await siblings(gate.url, seed, [{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 3 }], 12)
  const answers = await Promise.all(children.map(child => evaluate(gate.url, child)))
  t.equal(answers.filter(a => a.verdict === 'allow').length, 3, 'exactly the link\'s three')
  t.same(answers.filter(a => a.verdict !== 'allow').map(a => a.reasonCode), Array(9).fill('budget_exhausted'))
})

t.test('gate api protect: the upstream sees one request for five siblings of a max_invocations 1 link', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const children = await siblings(gate.url, seed, ONE_POST, 5)
  const statuses: number[] = []
  for (const [n, child] of children.entries()) statuses.push((await call(`${gate.url}/pets`, { body: { name: `Rex ${n}` }, headers: { 'x-gate-capability': header(child) } })).status)
  t.same(statuses, [201, 403, 403, 403, 403], 'one created, four refused')
  t.equal(upstream.received.filter(r => r.method === 'POST').length, 1, 'the upstream received one POST')
})

t.test('gate mcp serve: siblings\' tool calls share their link\'s max_total_cost', async t => {
  const files = await gateFiles(t)
  const gate = await startGateMcp(t, ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', '--', process.execPath, FIXTURE_SERVER_PATH], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  const grants: ToolGrant[] = [{ server_id: 'fs', tool_name: 'write_note', max_total_cost: { units: 100, currency: 'EUR' } }]
  const children = await siblings(gate.controlUrl, files.seed, grants, 4)
  const verdicts: string[] = []
  for (const [n, child] of children.entries()) {
    const result = (await gate.client.callTool({ name: 'write_note', arguments: { path: `/notes/${n}`, content: 'hello' }, _meta: { gateCapability: header(child), gateGovernedIntent: { max_amount: { units: 40, currency: 'EUR' } } } })) as CallToolResult
    const meta = (result._meta as { gate: { verdict: string; reason_code?: string } }).gate
    verdicts.push(meta.reason_code === undefined ? meta.verdict : `${meta.verdict} ${meta.reason_code}`)
  }
  t.same(verdicts, ['allow', 'allow', 'deny total_cost_exceeded', 'deny total_cost_exceeded'], 'two calls of 40 fit the link\'s 100, whichever sibling makes them')
})
