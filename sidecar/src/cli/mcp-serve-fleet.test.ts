// `gate mcp serve` in a fleet: a tool grant issued at trust-control is honoured by the MCP edge, its
// revocation there denies the next call, and every tool-call receipt (core form only: a tool call has no
// HttpReceipt) reaches trust-control through the outbox, stored byte for byte as the edge signed it.
import t from 'tap'
import { join } from 'node:path'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { createSigner, generateSecret, verifyCoreReceipt, type CapabilityToken } from '@gate/sdk'
import { call } from '../testing/http-client.js'
import { startGateMcp } from '../testing/mcp-session.js'
import { openReceiptStore } from '../stores/index.js'
import { FLEET_TOKEN, startFleetWithUpstream, fleetHealth, revokeCentrally, waitUntil } from '../testing/fleet.js'

const AUTH = { authorization: `Bearer ${FLEET_TOKEN}` }

t.test('tool calls are decided against central grants and revocations, and their receipts are shipped', async t => {
  const { dir, spec, upstream, control } = await startFleetWithUpstream(t)
  const db = join(dir, 'edge', 'receipts.db')
  const gate = await startGateMcp(
    t,
    ['--spec', spec, '--upstream', `${upstream.url}/`, '--server-id', 'pets', '--receipt-store', db, '--control-url', control.url, '--no-transparency-log'],
    { env: { GATE_CONTROL_TOKEN: FLEET_TOKEN } },
  )
  const issued = await call(`${control.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'pets', tool_name: 'createPet' }] }, ttlSeconds: 3600 },
    headers: AUTH,
  })
  t.equal(issued.status, 200)
  const capability = (issued.body as { capability: CapabilityToken }).capability
  const token = Buffer.from(JSON.stringify(capability)).toString('base64url')
  const createPet = async (withToken: boolean) => {
    const result = (await gate.client.callTool({ name: 'createPet', arguments: { body: { name: 'Rex' } }, ...(withToken ? { _meta: { gateCapability: token } } : {}) })) as CallToolResult
    return (result._meta as { gate: { verdict: string; reason_code?: string; receipt_id: string } }).gate
  }

  const calls = [await gate.client.callTool({ name: 'listPets', arguments: {} }).then(r => (r._meta as { gate: { verdict: string; receipt_id: string } }).gate)]
  calls.push(await createPet(false))
  t.match(calls[1], { verdict: 'deny', reason_code: 'capability_required' })
  calls.push(await createPet(true))
  t.match(calls[2], { verdict: 'allow' }, 'a grant issued at trust-control is honoured by the edge')
  await revokeCentrally(control.url, capability.id)
  await waitUntil('the edge denies the revoked capability', async () => {
    const gateMeta = await createPet(true)
    calls.push(gateMeta)
    return gateMeta.verdict === 'deny'
  })
  t.match(calls.at(-1), { verdict: 'deny', reason_code: 'capability_revoked' })

  await waitUntil('the edge ships its receipts', async () => (await fleetHealth(gate.controlUrl)).outbox.lag === 0)
  const local = await openReceiptStore(db)
  t.teardown(() => local.close())
  const enrolled = ((await call(`${control.url}/v1/keys`, { headers: AUTH })).body as { keys: { publicKey: string }[] }).keys.map(k => k.publicKey)
  for (const { receipt_id: id } of calls) {
    const atControl = await call(`${control.url}/v1/receipts/${id}`, { headers: AUTH })
    t.equal(atControl.status, 200, `receipt ${id} is at trust-control`)
    const body = atControl.body as { receipt: unknown; httpReceipt: unknown }
    t.equal(body.httpReceipt, null, 'a tool call has no HTTP form')
    t.match(verifyCoreReceipt(body.receipt, { trustedKeys: enrolled }), { failedStep: null }, 'it verifies under the enrolled edge key')
    const row = await local.query.getById(id)
    t.equal(atControl.text.includes(row!.coreJson!), true, 'served at trust-control exactly as the edge stored it')
  }
  const byTool = await call(`${control.url}/v1/receipts/query?toolServer=pets&toolName=createPet&limit=200`, { headers: AUTH })
  t.equal((byTool.body as { totalCount: number }).totalCount, calls.length - 1, "the edge's createPet decisions, once each, in the fleet's receipt query")
})
