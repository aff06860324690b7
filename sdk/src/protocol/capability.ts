// Capability tokens (spec 03, gate.capability.v1): issuer signature over the canonical token minus
// `signature`, a validity window, delegation-chain links, and fail-closed checks on every field the
// spec constrains. Verification never throws; it returns a typed failure with a reason.
import { InvalidKeyError } from '../errors.js'
import type { CapabilityToken, DelegationLink } from '../types.js'
import { canonicalJson } from './canonical-json.js'
import type { CryptoBackendName } from './crypto-backend.js'
import { utf8 } from './hex.js'
import { algorithmOf } from './keys.js'
import { sha256Hex } from './sha256.js'
import type { Signer } from './signer.js'
import { checkSignature } from './verify-signature.js'
import { VerifiedSignatureCache } from './signature-cache.js'
import { describeUnixTime } from './unix-time.js'

export const CAPABILITY_SCHEMA = 'gate.capability.v1'
const ALGORITHMS = new Set(['ed25519', 'p256', 'p384', 'hybrid'])

export type CapabilityFailureCode =
  | 'malformed'
  | 'unknown_schema'
  | 'unsupported_algorithm'
  | 'invalid_budget_share'
  | 'untrusted_issuer'
  | 'invalid_signature'
  | 'not_yet_valid'
  | 'expired'
  | 'invalid_delegation'

export type CapabilityVerification =
  | { ok: true; token: CapabilityToken }
  | { ok: false; code: CapabilityFailureCode; reason: string }

export interface VerifyCapabilityOptions {
  /** Issuer public keys (wire form) whose tokens are accepted. */
  trustedIssuers: Iterable<string>
  /** Unix seconds. */
  now: number
  backend?: CryptoBackendName
  /** Issuer signatures already verified (the time window and trust are still checked every call). */
  cache?: VerifiedSignatureCache
}

export type UnsignedCapability = Omit<CapabilityToken, 'signature' | 'issuer'> & { issuer?: string }

/** Signs a capability token as `signer` (which becomes its issuer). */
export function signCapability(token: UnsignedCapability, signer: Signer): CapabilityToken {
  const body: Record<string, unknown> = { ...token, issuer: signer.publicKey }
  delete body.signature
  if (token.issuer !== undefined && token.issuer !== signer.publicKey) {
    throw new InvalidKeyError('issuer', 'the token names an issuer other than the signer')
  }
  if (body.algorithm === undefined && signer.algorithm !== 'ed25519') body.algorithm = signer.algorithm
  const signature = signer.sign(utf8(canonicalJson(body)))
  return { ...(body as Omit<CapabilityToken, 'signature'>), signature }
}

/** Signs one delegation link as `signer` (the delegator). */
export function signDelegationLink(link: Omit<DelegationLink, 'signature' | 'delegator'>, signer: Signer): DelegationLink {
  const body = { ...link, delegator: signer.publicKey }
  return { ...body, signature: signer.sign(utf8(canonicalJson(body))) }
}

/** SHA-256 of the canonical scope: what delegation links bind (`scope_hash`). */
export function scopeHash(scope: unknown): string {
  return sha256Hex(canonicalJson(scope))
}

/** Verifies a capability token. The order of checks is fixed and documented in docs/capabilities.md. */
export function verifyCapability(token: unknown, options: VerifyCapabilityOptions): CapabilityVerification {
  const shape = shapeProblem(token)
  if (shape !== undefined) return fail('malformed', shape)
  const t = token as CapabilityToken
  if (t.schema !== undefined && t.schema !== CAPABILITY_SCHEMA) return fail('unknown_schema', `unknown capability schema "${String(t.schema)}"`)
  if (t.algorithm !== undefined && !ALGORITHMS.has(t.algorithm)) return fail('unsupported_algorithm', `unknown algorithm "${String(t.algorithm)}"`)
  const keyAlgorithm = algorithmOf(t.issuer)
  if (t.algorithm === 'hybrid' || keyAlgorithm === 'hybrid') return fail('unsupported_algorithm', 'hybrid (ML-DSA) signatures are not supported by this verifier')
  if (keyAlgorithm === undefined) return fail('malformed', 'issuer is not a recognized public key form')
  if (t.algorithm !== undefined && t.algorithm !== keyAlgorithm) return fail('unsupported_algorithm', `algorithm ${t.algorithm} does not match the ${keyAlgorithm} issuer key`)
  if (t.budget_share_bps !== undefined && (!Number.isInteger(t.budget_share_bps) || t.budget_share_bps < 0 || t.budget_share_bps > 10000)) {
    return fail('invalid_budget_share', `budget_share_bps must be an integer in 0..10000, got ${String(t.budget_share_bps)}`)
  }
  const trusted = new Set(options.trustedIssuers)
  const chain = t.delegation_chain ?? []
  const rootTrusted = trusted.has(t.issuer) || (chain.length > 0 && trusted.has(chain[0]!.delegator))
  if (!rootTrusted) return fail('untrusted_issuer', 'the token issuer is not a trusted authority')

  const { signature, ...body } = t
  const signed = canonicalJson(body)
  const cacheKey = options.cache === undefined ? undefined : VerifiedSignatureCache.key(t.issuer, signed, signature)
  if (cacheKey === undefined || !options.cache!.has(cacheKey)) {
    const sig = checkSignature(t.issuer, utf8(signed), signature, options.backend)
    if (!sig.valid) return fail('invalid_signature', `issuer signature: ${sig.reason ?? 'does not verify'}`)
    if (cacheKey !== undefined) options.cache!.add(cacheKey)
  }

  if (options.now < t.issued_at) return fail('not_yet_valid', `the token is not valid before ${describeUnixTime(t.issued_at)}`)
  if (options.now >= t.expires_at) return fail('expired', `the token expired at ${describeUnixTime(t.expires_at)}`)

  const chainProblem = delegationProblem(chain, t, options.backend)
  if (chainProblem !== undefined) return fail('invalid_delegation', chainProblem)
  return { ok: true, token: t }
}

function fail(code: CapabilityFailureCode, reason: string): CapabilityVerification {
  return { ok: false, code, reason }
}

function shapeProblem(token: unknown): string | undefined {
  if (typeof token !== 'object' || token === null || Array.isArray(token)) return 'the token is not a JSON object'
  const t = token as Record<string, unknown>
  for (const f of ['id', 'issuer', 'subject', 'signature'] as const) {
    if (typeof t[f] !== 'string' || t[f] === '') return `${f} must be a non-empty string`
  }
  for (const f of ['issued_at', 'expires_at'] as const) {
    if (!Number.isSafeInteger(t[f]) || (t[f] as number) < 0) return `${f} must be a non-negative integer (Unix seconds)`
  }
  const scope = t.scope as { grants?: unknown } | undefined
  if (typeof scope !== 'object' || scope === null || !Array.isArray(scope.grants)) return 'scope.grants must be an array'
  for (const [i, g] of (scope.grants as unknown[]).entries()) {
    const grant = g as Record<string, unknown> | null
    if (typeof grant !== 'object' || grant === null) return `scope.grants[${i}] must be an object`
    if (typeof grant.server_id !== 'string' || typeof grant.tool_name !== 'string') return `scope.grants[${i}] needs server_id and tool_name strings`
    const max = grant.max_invocations
    if (max !== undefined && max !== null && (!Number.isSafeInteger(max) || (max as number) < 0)) {
      return `scope.grants[${i}].max_invocations must be a non-negative integer`
    }
  }
  if (t.delegation_chain !== undefined && !Array.isArray(t.delegation_chain)) return 'delegation_chain must be an array'
  return undefined
}

// A delegation chain runs from a trusted root to the token's issuer: each link is signed by its
// delegator, hands over to the next link's delegator, and the last delegatee issued this token.
function delegationProblem(chain: DelegationLink[], token: CapabilityToken, backend?: CryptoBackendName): string | undefined {
  for (const [i, link] of chain.entries()) {
    if (typeof link !== 'object' || link === null) return `delegation_chain[${i}] is not an object`
    if (typeof link.delegator !== 'string' || typeof link.delegatee !== 'string' || typeof link.signature !== 'string') {
      return `delegation_chain[${i}] needs delegator, delegatee and signature strings`
    }
    const { signature, ...body } = link
    const sig = checkSignature(link.delegator, utf8(canonicalJson(body)), signature, backend)
    if (!sig.valid) return `delegation_chain[${i}] signature: ${sig.reason ?? 'does not verify'}`
    const next = chain[i + 1]
    if (next !== undefined && next.delegator !== link.delegatee) return `delegation_chain[${i}] does not hand over to link ${i + 1}`
    if (typeof link.timestamp === 'number' && link.timestamp > token.issued_at) return `delegation_chain[${i}] is dated after the token was issued`
  }
  const last = chain[chain.length - 1]
  if (last !== undefined && last.delegatee !== token.issuer) return 'the last delegation link does not name the token issuer'
  return undefined
}
