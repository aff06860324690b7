// A receipt store for the audit's tamper tests, written only by real `gate` processes, one after the
// other on the same file and authority key, so that every kind of row is in it:
//   gate mcp serve-http   core-only rows: tool calls allowed, denied, and one under a capability
//                         (capability id and agent subject)
//   gate api protect      decision and finalized HTTP receipts (kind final, decision_receipt_id)
//   gate sidecar          receipts under a capability with a charged and a refused cost (capability,
//                         subject, cost columns), then `bulk` allowed GETs with tenants; checkpoints
//                         every 100 receipts
//   gate trust serve      one receipt query, which stores the core form of the first page's rows
// Every process is stopped (and awaited) before the store is returned, so a copy of the file is whole.
import type { Test } from 'tap'
import { readFileSync } from 'node:fs'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { createSigner, sha256Hex, signCapability, uuidv7 } from '@gate/sdk'
import { gateFiles } from './gate-files.js'
import { call } from './http-client.js'
import { startGateMcpHttp } from './mcp-http-session.js'
import { spawnGate, type GateProcess } from './spawn-gate.js'
import { startUpstreamApp } from './upstream-app.js'

export interface AuditedStore {
  dir: string
  db: string
  seed: string
  /** The authority's public key: every receipt's signer. */
  key: string
}

const TOKEN = 'audited-store-control-token-0123456789'
const env = { GATE_CONTROL_TOKEN: TOKEN }
const auth = { authorization: `Bearer ${TOKEN}` }
const CHECKPOINTS = ['--checkpoint-every', '100', '--checkpoint-interval-secs', '0']
// evaluations sent at once to the sidecar (its group commit takes them in batches)
const CONCURRENCY = 16

const now = () => Math.floor(Date.now() / 1000)

function caller(n: number, tenant: string | undefined) {
  return { subject: `user-${n}`, auth_method: { method: 'bearer', token_hash: sha256Hex(`token-${n}`) }, tenant }
}

function request(method: string, path: string, n: number, tenant: string | undefined, extra: Record<string, unknown> = {}) {
  return { request_id: uuidv7(), method, path, route_pattern: path, caller: caller(n, tenant), timestamp: now(), ...extra }
}

async function stopped(gate: GateProcess): Promise<void> {
  const code = await gate.stop('SIGTERM')
  if (code !== 0) throw new Error(`gate exited with ${code}:\n${gate.output()}`)
}

/** Writes the store; `bulk` allowed GETs follow the receipts of every other kind. */
export async function buildAuditedStore(t: Test, bulk: number): Promise<AuditedStore> {
  const { dir, spec, seed, db } = await gateFiles(t)
  const authority = createSigner({ secret: Buffer.from(readFileSync(seed, 'utf8').trim(), 'hex') })

  // tool calls: core-only rows
  const edge = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', db, '--authority-seed-file', seed, '--server-id', 'fs', '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH], { env })
  const { client } = await edge.connect()
  const capability = signCapability(
    { schema: 'gate.capability.v1', id: 'cap-audited-tool', subject: 'ab'.repeat(32), scope: { grants: [{ server_id: 'fs', tool_name: 'write_note' }] }, issued_at: now() - 10, expires_at: now() + 3600 },
    authority,
  )
  await client.callTool({ name: 'echo', arguments: { text: 'one' } })
  await client.callTool({ name: 'write_note', arguments: { path: '/a', content: 'denied' } })
  await client.callTool({ name: 'write_note', arguments: { path: '/b', content: 'allowed' }, _meta: { gateCapability: Buffer.from(JSON.stringify(capability)).toString('base64url') } })
  await client.close()
  await stopped(edge.proc)

  // the proxy: a decision and a finalized receipt per request
  const upstream = await startUpstreamApp()
  try {
    const proxy = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--listen', '127.0.0.1:0', '--receipt-store', db, '--authority-seed-file', seed, ...CHECKPOINTS], { env })
    t.teardown(() => proxy.stop('SIGKILL'))
    for (let i = 0; i < 2; i++) if ((await call(`${proxy.url}/pets/${i + 1}`)).status !== 200) throw new Error('api protect did not forward GET /pets/{id}')
    await stopped(proxy)
  } finally {
    await upstream.close()
  }

  // the sidecar: capability, subject, cost and tenant columns, then the bulk
  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, ...CHECKPOINTS], { env })
  t.teardown(() => sidecar.stop('SIGKILL'))
  const evaluate = async (body: unknown, headers: Record<string, string> = {}) => {
    const r = await call(`${sidecar.url}/gate/evaluate`, { body, headers })
    if (r.status !== 200) throw new Error(`evaluate answered ${r.status}: ${r.text}`)
    return r.body as { verdict: { verdict: string } }
  }
  const issued = await call(`${sidecar.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: createSigner({ secret: new Uint8Array(32).fill(9) }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'PATCH /pets/{id}', max_total_cost: { units: 100_000, currency: 'USD' } }] }, ttlSeconds: 3600 },
    headers: auth,
  })
  if (issued.status !== 200) throw new Error(`issue answered ${issued.status}: ${issued.text}`)
  const header = { 'x-gate-capability': Buffer.from(JSON.stringify((issued.body as { capability: unknown }).capability)).toString('base64url') }
  for (const [n, units] of [45, 450, 501].entries()) {
    await evaluate(request('PATCH', `/pets/${n + 1}`, n, 'acme', { governed_intent: { max_amount: { units, currency: 'USD' } } }), header)
  }
  await evaluate(request('POST', '/pets', 3, 'globex'))
  const tenants = ['acme', 'globex', undefined]
  for (let n = 0; n < bulk; n += CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, bulk - n) }, (_, k) => evaluate(request('GET', '/pets', n + k, tenants[(n + k) % 3]))))
  }
  await stopped(sidecar)

  // trust-control reads a page: the core forms of those rows are stored beside their HTTP receipts
  const serve = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', seed, '--no-transparency-log'], { env })
  t.teardown(() => serve.stop('SIGKILL'))
  const page = await call(`${serve.url}/v1/receipts/query?limit=20`, { headers: auth })
  if (page.status !== 200) throw new Error(`receipt query answered ${page.status}: ${page.text}`)
  await stopped(serve)
  return { dir, db, seed, key: authority.publicKey }
}
