// What the broken sidecar holds (test support, beside broken-sidecar.ts): its options, its key and
// policy, and the in-memory records its routes share (issued tokens, revocations, counters, receipts,
// approvals, execution nonces).
import { createSigner, generateSecret, sha256Hex, type CapabilityToken, type HttpReceipt } from '@gate/sdk'
import { DEFAULT_SPEC_TEXT } from '../default-spec.js'
import { routesFromDocument } from '../policy.js'
import { createCounters } from './broken-capabilities.js'
import type { SidecarFault } from './broken-sidecar-faults.js'

export interface BrokenSidecarOptions {
  faults?: readonly SidecarFault[]
  /** Bearer token of the /v1 control routes. Default 'conformance-control-token'. */
  controlToken?: string
  /** The OpenAPI document (JSON text). Default: the suite's built-in document. */
  specText?: string
  /** Strict execution nonces (Gate's `--strict-nonces`): deny-by-default requests get a preflight. Default false. */
  strictNonces?: boolean
  /** Lifetime of an execution nonce (Gate's `--nonce-ttl-secs`), in seconds. Default 60. */
  nonceTtlSeconds?: number
  /** Issuer keys trusted besides its own (Gate's `--trusted-issuer`). Default none. */
  trustedIssuers?: readonly string[]
  /** Forward every request that is not one of its routes to this base URL, as `gate api protect` does. Default none (404). */
  upstream?: string
}

/** The broken sidecar's settings and records, shared by its routes, policy and receipts. */
export type BrokenState = ReturnType<typeof createBrokenState>

export function createBrokenState(options: BrokenSidecarOptions) {
  const faults = new Set<SidecarFault>(options.faults ?? [])
  const has = (f: SidecarFault) => faults.has(f)
  const controlToken = options.controlToken ?? 'conformance-control-token'
  const specText = options.specText ?? DEFAULT_SPEC_TEXT
  const routes = routesFromDocument(JSON.parse(specText), 'broken-sidecar')
  const policyHash = sha256Hex(specText)
  const signer = createSigner({ secret: generateSecret() })
  const otherKey = createSigner({ secret: generateSecret() }).publicKey
  const issued = new Map<string, CapabilityToken>()
  const revoked = new Set<string>()
  // invocation counters (grants, aggregate budgets, families, shares), captured all or none
  const counters = createCounters()
  const trustedIssuers = [signer.publicKey, ...(options.trustedIssuers ?? [])]
  // every receipt signed, for GET /v1/receipts/query, and its stored text by id (what the store holds:
  // the suite may alter it, as it alters a real sidecar's file)
  const receipts: HttpReceipt[] = []
  const storedTexts = new Map<string, string>()
  // approvals by id: what request they are bound to, and where they stand
  const approvals = new Map<string, { binding: string; state: 'pending' | 'approved' | 'denied' | 'used' }>()
  const nonceTtlSeconds = options.nonceTtlSeconds ?? 60
  const startedAt = Math.floor(Date.now() / 1000)
  // issued execution nonces by id: the request they are bound to, when they expire, and whether they were used
  const nonces = new Map<string, { binding: string; expiresAt: number; used: boolean }>()
  const strictNonces = options.strictNonces === true
  return { has, controlToken, routes, policyHash, signer, otherKey, issued, revoked, counters, trustedIssuers, receipts, storedTexts, approvals, strictNonces, nonceTtlSeconds, startedAt, nonces }
}
