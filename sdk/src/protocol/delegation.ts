// Delegation chains (docs/capabilities.md, "Two kinds of token"). Every link is signed by its
// delegator, hands over to the next link's delegator, and links are in non-decreasing time; a chain
// holds at most MAX_DELEGATION_DEPTH links. Then:
//  - a token signed by a trusted issuer carries its chain as provenance: the issuer vouches for the
//    scope. Links may be dated after the token was issued (holders delegate after issuance), need not
//    end at the subject, and may omit scope_hash; a scope_hash present is checked against the scope
//    the link carries, when it carries one.
//  - a child signed by the chain's last delegatee (not itself trusted) proves its attenuation: every
//    link binds and states what it delegates (scope_hash, the scope itself, expires_at, and any budget
//    share or aggregate budget), each link is within the one before it, and the child is within the
//    last. Nothing is taken on trust, least of all an attenuation proof: its claim is recomputed.
import type { CapabilityToken, DelegationLink } from '../types.js'
import { canonicalJson } from './canonical-json.js'
import type { CryptoBackendName } from './crypto-backend.js'
import { utf8 } from './hex.js'
import { sha256Hex } from './sha256.js'
import { attenuationProblem, scopeSubsetProblem, type DelegationTerms } from './scope-subset.js'
import { VerifiedSignatureCache } from './signature-cache.js'
import { checkSignature } from './verify-signature.js'

/** The maximum delegation depth: a longer chain is refused by policy. */
export const MAX_DELEGATION_DEPTH = 4

export type DelegationFailureCode = 'invalid_delegation' | 'attenuation_unproven' | 'scope_widened' | 'attenuation_proof_invalid'

export interface DelegationFailure {
  code: DelegationFailureCode
  reason: string
}

/** How the token's authority is established: its issuer is trusted, or its chain's root is. */
export type TokenAuthority = 'issuer' | 'delegated'

export interface DelegationCheckOptions {
  backend?: CryptoBackendName
  cache?: VerifiedSignatureCache
}

const HEX64 = /^[0-9a-f]{64}$/
const LINK_MEMBERS = new Set(['capability_id', 'delegator', 'delegatee', 'scope_hash', 'timestamp', 'signature', 'scope', 'expires_at', 'budget_share_bps', 'aggregate_invocation_budget'])

/** SHA-256 of the canonical scope: what delegation links and attenuation proofs bind. */
export function scopeHash(scope: unknown): string {
  return sha256Hex(canonicalJson(scope))
}

/**
 * A delegation link's identity: SHA-256 of the canonical link minus `signature`, i.e. of exactly what
 * its delegator signed. Neither its delegatee nor anyone below can choose it (any change breaks the
 * signature), and a second signature over the same body (ECDSA signatures are malleable) names the
 * same link. Its budgets are counted under it (docs/capabilities.md, Budgets).
 */
export function delegationLinkId(link: DelegationLink): string {
  const { signature: _signature, ...body } = link
  return sha256Hex(canonicalJson(body))
}

/** Checks a token's chain (its signature and window are checked before). Undefined when it holds. */
export function checkDelegation(token: CapabilityToken, authority: TokenAuthority, options: DelegationCheckOptions = {}): DelegationFailure | undefined {
  const chain = token.delegation_chain ?? []
  for (const [i, link] of chain.entries()) {
    const problem = linkProblem(link, chain[i + 1], options)
    if (problem !== undefined) return invalid(`delegation_chain[${i}] ${problem}`)
  }
  if (authority === 'delegated') {
    const problem = delegatedChildProblem(token, chain)
    if (problem !== undefined) return problem
  }
  return token.attenuation_proof === undefined ? undefined : attenuationProofProblem(token, chain)
}

/** The terms a link delegates, when it states them all (scope and expires_at). */
export function linkTerms(link: DelegationLink): DelegationTerms | undefined {
  if (link.scope === undefined || link.expires_at === undefined) return undefined
  return { scope: link.scope, expires_at: link.expires_at, budget_share_bps: link.budget_share_bps, aggregate_invocation_budget: link.aggregate_invocation_budget }
}

/** The terms a token holds. */
export function tokenTerms(token: CapabilityToken): DelegationTerms {
  return { scope: token.scope, expires_at: token.expires_at, budget_share_bps: token.budget_share_bps, aggregate_invocation_budget: token.aggregate_invocation_budget }
}

function linkProblem(link: DelegationLink, next: DelegationLink | undefined, options: DelegationCheckOptions): string | undefined {
  if (typeof link !== 'object' || link === null || Array.isArray(link)) return 'is not an object'
  for (const f of ['capability_id', 'delegator', 'delegatee', 'signature'] as const) {
    if (typeof link[f] !== 'string' || link[f] === '') return `needs a non-empty ${f} string`
  }
  if (!Number.isSafeInteger(link.timestamp) || link.timestamp < 0) return 'needs a timestamp (Unix seconds)'
  if (link.scope_hash !== undefined && (typeof link.scope_hash !== 'string' || !HEX64.test(link.scope_hash))) return 'has a scope_hash that is not 64 lowercase hex'
  const { signature, ...body } = link
  const signed = canonicalJson(body)
  const key = options.cache === undefined ? undefined : VerifiedSignatureCache.key(link.delegator, signed, signature)
  if (key === undefined || !options.cache!.has(key)) {
    const sig = checkSignature(link.delegator, utf8(signed), signature, options.backend)
    if (!sig.valid) return `signature: ${sig.reason ?? 'does not verify'}`
    if (key !== undefined) options.cache!.add(key)
  }
  if (link.scope !== undefined && link.scope_hash !== scopeHash(link.scope)) return 'carries a scope whose hash is not its scope_hash'
  if (next !== undefined) {
    if (typeof next !== 'object' || next === null) return 'is followed by something that is not a link'
    if (next.delegator !== link.delegatee) return 'does not hand over to the next link (its delegatee is not the next delegator)'
    if (Number.isSafeInteger(next.timestamp) && next.timestamp < link.timestamp) return 'is dated after the next link'
  }
  return undefined
}

function delegatedChildProblem(token: CapabilityToken, chain: DelegationLink[]): DelegationFailure | undefined {
  const last = chain[chain.length - 1]
  if (last === undefined) return invalid('a token not signed by a trusted issuer needs a delegation chain')
  if (last.delegatee !== token.issuer) return invalid('the last delegation link does not name the token issuer as its delegatee')
  let parent: DelegationTerms | undefined
  for (const [i, link] of chain.entries()) {
    if (link.timestamp > token.issued_at) return invalid(`delegation_chain[${i}] is dated after the child token was issued`)
    const unknown = Object.keys(link).find(k => !LINK_MEMBERS.has(k))
    if (unknown !== undefined) return invalid(`delegation_chain[${i}] carries a member ${unknown} this verifier does not understand`)
    const terms = linkTerms(link)
    if (link.scope_hash === undefined || terms === undefined) {
      return {
        code: 'attenuation_unproven',
        reason: `delegation_chain[${i}] does not state what it delegates (scope_hash, scope and expires_at), so the child's attenuation cannot be proven`,
      }
    }
    if (parent !== undefined) {
      const widened = attenuationProblem(terms, parent)
      if (widened !== undefined) return { code: 'scope_widened', reason: `delegation_chain[${i}] delegates more than it received: ${widened}` }
    }
    parent = terms
  }
  const widened = attenuationProblem(tokenTerms(token), parent!)
  return widened === undefined ? undefined : { code: 'scope_widened', reason: `the token holds more than its chain delegated: ${widened}` }
}

// An attenuation proof claims childScopeHash ⊆ parentScopeHash. It is never trusted: both hashes must
// be the ones the verifier computes, and the subset claim is recomputed from the scope the last link
// carries. A claim that cannot be recomputed refuses the token.
function attenuationProofProblem(token: CapabilityToken, chain: DelegationLink[]): DelegationFailure | undefined {
  const proof = token.attenuation_proof as unknown as Record<string, unknown> | null
  const bad = (reason: string): DelegationFailure => ({ code: 'attenuation_proof_invalid', reason: `attenuation_proof ${reason}` })
  if (typeof proof !== 'object' || proof === null || typeof proof.parentScopeHash !== 'string' || typeof proof.childScopeHash !== 'string') {
    return bad('needs parentScopeHash and childScopeHash strings')
  }
  if (proof.childScopeHash !== scopeHash(token.scope)) return bad('childScopeHash is not the hash of the token scope')
  const last = chain[chain.length - 1]
  if (last === undefined) return bad('binds no parent: the token has no delegation chain')
  if (proof.parentScopeHash !== last.scope_hash) return bad("parentScopeHash is not the last delegation link's scope_hash")
  if (last.scope === undefined) return bad('cannot be recomputed: the last delegation link does not carry the scope it delegates')
  const widened = scopeSubsetProblem(token.scope, last.scope)
  return widened === undefined ? undefined : { code: 'scope_widened', reason: `attenuation_proof claims a subset that is not one: ${widened}` }
}

function invalid(reason: string): DelegationFailure {
  return { code: 'invalid_delegation', reason }
}
