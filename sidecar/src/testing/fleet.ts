// A fleet on loopback for end-to-end tests: one real `gate trust serve` and real `gate sidecar`
// processes connected to it with --control-url (through a TCP relay when a test cuts the network), and
// the calls the tests make: central issuance and revocation, evaluations presenting a capability, and
// every receipt stored at trust-control, read page by page.
import type { Test } from 'tap'
import { writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ANONYMOUS_CALLER, createSigner, generateSecret, uuidv7, type CapabilityToken } from '@gate/sdk'
import { PETS_SPEC_YAML } from './pets-spec.js'
import { spawnGate, type GateProcess } from './spawn-gate.js'
import { startUpstreamApp, type UpstreamApp } from './upstream-app.js'
import { call } from './http-client.js'

export const FLEET_TOKEN = 'fleet-test-service-token-0123456789'
const AUTH = { authorization: `Bearer ${FLEET_TOKEN}` }

/** Starts `gate trust serve` over `dir`/control (a restart with the same dir reopens the same database), with `extra` flags. */
export async function startTrustControl(t: Test, dir: string, extra: string[] = []): Promise<GateProcess> {
  const home = join(dir, 'control')
  mkdirSync(home, { recursive: true })
  const tokenFile = join(home, 'service-token')
  writeFileSync(tokenFile, `${FLEET_TOKEN}\n`, { mode: 0o600 })
  const trust = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', join(home, 'receipts.db'), '--service-token-file', tokenFile, '--no-transparency-log', ...extra], {
    env: { GATE_CONTROL_TOKEN: '' },
  })
  t.teardown(() => trust.stop('SIGKILL'))
  return trust
}

/** A test's directory holding the pets document, a real upstream API and a trust-control over it (all stopped in teardown). */
export async function startFleetWithUpstream(t: Test): Promise<{ dir: string; spec: string; upstream: UpstreamApp; control: GateProcess }> {
  const dir = t.testdir()
  const spec = join(dir, 'pets.yaml')
  writeFileSync(spec, PETS_SPEC_YAML)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  return { dir, spec, upstream, control: await startTrustControl(t, dir) }
}

/** Starts `gate sidecar` number `n` connected to `controlUrl`; the same `n` reopens the same receipt store. */
export async function startFleetSidecar(t: Test, dir: string, n: number, controlUrl: string, extra: string[] = []): Promise<GateProcess> {
  const sidecar = await spawnGate(
    ['sidecar', '--listen', '127.0.0.1:0', '--receipt-store', join(dir, `sidecar-${n}`, 'receipts.db'), '--control-url', controlUrl, '--no-transparency-log', ...extra],
    { env: { GATE_CONTROL_TOKEN: FLEET_TOKEN } },
  )
  t.teardown(() => sidecar.stop('SIGKILL'))
  return sidecar
}

/** Issues a capability for POST /pets at trust-control (optionally with a max_invocations budget). */
export async function issueCentrally(controlUrl: string, maxInvocations?: number): Promise<CapabilityToken> {
  const grant: Record<string, unknown> = { server_id: 'http', tool_name: 'POST /pets' }
  if (maxInvocations !== undefined) grant.max_invocations = maxInvocations
  const res = await call(`${controlUrl}/v1/capabilities/issue`, {
    body: { subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [grant] }, ttlSeconds: 3600 },
    headers: AUTH,
  })
  if (res.status !== 200) throw new Error(`issue answered ${res.status}: ${res.text}`)
  return (res.body as { capability: CapabilityToken }).capability
}

export async function revokeCentrally(controlUrl: string, capabilityId: string): Promise<void> {
  const res = await call(`${controlUrl}/v1/revocations`, { body: { capabilityId }, headers: AUTH })
  if (res.status !== 200) throw new Error(`revoke answered ${res.status}: ${res.text}`)
}

/** What one evaluation answered. */
export interface FleetVerdict {
  verdict: string
  reasonCode: string | undefined
  receiptId: string
}

/** POST /pets presenting `capability` (a GET /pets presenting none when undefined), with `extra` request members. */
export async function evaluate(sidecarUrl: string, capability?: CapabilityToken, extra: Record<string, unknown> = {}): Promise<FleetVerdict> {
  const request = { request_id: uuidv7(), method: capability === undefined ? 'GET' : 'POST', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000), body_hash: null, ...extra }
  const headers: Record<string, string> = capability === undefined ? {} : { 'x-gate-capability': Buffer.from(JSON.stringify(capability)).toString('base64url') }
  const res = await call(`${sidecarUrl}/gate/evaluate`, { body: request, headers })
  if (res.status !== 200) throw new Error(`evaluate answered ${res.status}: ${res.text}`)
  const body = res.body as { verdict: { verdict: string; details?: { reason_code?: string } }; receipt: { id: string } }
  return { verdict: body.verdict.verdict, reasonCode: body.verdict.details?.reason_code, receiptId: body.receipt.id }
}

/** Every receipt id stored at trust-control, in seq order (duplicates kept, so a test can count them). */
export async function receiptIdsAtControl(controlUrl: string): Promise<string[]> {
  const ids: string[] = []
  let cursor: number | null = 0
  while (cursor !== null) {
    const res = await call(`${controlUrl}/v1/receipts/query?limit=200&cursor=${cursor}`, { headers: AUTH })
    if (res.status !== 200) throw new Error(`query answered ${res.status}: ${res.text}`)
    const page = res.body as { nextCursor: number | null; receipts: { id: string }[] }
    ids.push(...page.receipts.map(r => r.id))
    cursor = page.nextCursor
  }
  return ids
}

/** The sidecar's /gate/health `fleet` block. */
export async function fleetHealth(sidecarUrl: string): Promise<{ outbox: { lag: number }; revocations: { stale: boolean; revoked: number; last_error: string | null }; key_enrolled: boolean; authority: { generation: number } | null }> {
  return ((await call(`${sidecarUrl}/gate/health`)).body as { fleet: never }).fleet
}

/** Calls `probe` until it returns true; `what` names the awaited event in the failure. */
export async function waitUntil(what: string, probe: () => Promise<boolean>, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${limitMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}
