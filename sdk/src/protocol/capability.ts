// Capability tokens (spec 03, gate.capability.v1): verifying a token answers whether it is authentic,
// in time and well chained: the issuer signature over the canonical token minus `signature`, the
// validity window, the delegation chain and the attenuation it proves (delegation.ts). What a token
// allows for one call is decided when it is used (capability-use.ts). Verification never throws; it
// returns a typed failure with a reason.
import { InvalidKeyError } from '../errors.js'
import type { CapabilityToken, DelegationLink } from '../types.js'
import { canonicalJson } from './canonical-json.js'
import type { CryptoBackendName } from './crypto-backend.js'
import { checkDelegation, MAX_DELEGATION_DEPTH, scopeHash, type DelegationFailureCode, type TokenAuthority } from './delegation.js'
import { utf8 } from './hex.js'
import { algorithmOf } from './keys.js'
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
  | 'delegation_too_deep'
  | 'untrusted_issuer'
  | 'invalid_signature'
  | 'not_yet_valid'
  | 'expired'
  | DelegationFailureCode

export type CapabilityVerification =
  | { ok: true; token: CapabilityToken; authority: TokenAuthority }
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

/**
 * Signs one delegation link as `signer` (the delegator). A link carrying the `scope` it delegates gets
 * that scope's `scope_hash` when none is given.
 */
export function signDelegationLink(link: Omit<DelegationLink, 'signature' | 'delegator'>, signer: Signer): DelegationLink {
  const body: Omit<DelegationLink, 'signature'> = { ...link, delegator: signer.publicKey }
  if (body.scope !== undefined && body.scope_hash === undefined) body.scope_hash = scopeHash(body.scope)
  return { ...body, signature: signer.sign(utf8(canonicalJson(body))) }
}

/** Verifies a capability token. The order of checks is fixed and documented in docs/capabilities.md. */
export function verifyCapability(token: unknown, options: VerifyCapabilityOptions): CapabilityVerification {
  const shape = shapeProblem(token)
  if (shape !== undefined) return fail('malformed', shape)
  const t = token as CapabilityToken
  if (t.schema !== undefined && t.schema !== CAPABILITY_SCHEMA) return fail('unknown_schema', `unknown capability schema "${String(t.schema)}"`)
  if (t.algorithm !== undefined && !ALGORITHMS.has(t.algorithm)) return fail('unsupported_algorithm', `unknown algorithm "${String(t.algorithm)}"`)
  const keyAlgorithm = algorithmOf(t.issuer)
  if (keyAlgorithm === undefined) return fail('malformed', 'issuer is not a recognized public key form')
  if (t.algorithm !== undefined && t.algorithm !== keyAlgorithm) return fail('unsupported_algorithm', `algorithm ${t.algorithm} does not match the ${keyAlgorithm} issuer key`)
  if (t.budget_share_bps !== undefined && (!Number.isInteger(t.budget_share_bps) || t.budget_share_bps < 0 || t.budget_share_bps > 10000)) {
    return fail('invalid_budget_share', `budget_share_bps must be an integer in 0..10000, got ${String(t.budget_share_bps)}`)
  }
  const chain = t.delegation_chain ?? []
  if (chain.length > MAX_DELEGATION_DEPTH) return fail('delegation_too_deep', `the delegation chain has ${chain.length} links; at most ${MAX_DELEGATION_DEPTH} are accepted`)
  const trusted = new Set(options.trustedIssuers)
  // A trusted issuer vouches for its token; otherwise the chain's root must be trusted and the chain
  // must prove every step of the attenuation down to this token's signer.
  const authority: TokenAuthority | undefined = trusted.has(t.issuer) ? 'issuer' : chain.length > 0 && trusted.has(chain[0]!.delegator) ? 'delegated' : undefined
  if (authority === undefined) return fail('untrusted_issuer', 'the token issuer is not a trusted authority, nor is its delegation chain rooted in one')

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

  const delegation = checkDelegation(t, authority, { backend: options.backend, cache: options.cache })
  if (delegation !== undefined) return fail(delegation.code, delegation.reason)
  return { ok: true, token: t, authority }
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
  const scope = t.scope as Record<string, unknown> | undefined
  if (typeof scope !== 'object' || scope === null || Array.isArray(scope)) return 'scope must be an object'
  for (const kind of ['grants', 'resource_grants', 'prompt_grants'] as const) {
    const list = scope[kind]
    if (list === undefined) continue
    if (!Array.isArray(list)) return `scope.${kind} must be an array`
    for (const [i, g] of list.entries()) if (typeof g !== 'object' || g === null || Array.isArray(g)) return `scope.${kind}[${i}] must be an object`
  }
  for (const [i, g] of ((scope.grants as unknown[] | undefined) ?? []).entries()) {
    const grant = g as Record<string, unknown>
    if (typeof grant.server_id !== 'string' || typeof grant.tool_name !== 'string') return `scope.grants[${i}] needs server_id and tool_name strings`
    const max = grant.max_invocations
    if (max !== undefined && max !== null && (!Number.isSafeInteger(max) || (max as number) < 0)) {
      return `scope.grants[${i}].max_invocations must be a non-negative integer`
    }
  }
  if (t.delegation_chain !== undefined && !Array.isArray(t.delegation_chain)) return 'delegation_chain must be an array'
  return undefined
}
