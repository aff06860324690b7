// Capability tokens for tests across packages (exported with the receipt examples as @gate/sdk/testing).
// Deterministic where the signers are; not secrets.
import type { CapabilityScope, CapabilityToken, DelegationLink } from '../types.js'
import { signCapability, signDelegationLink } from './capability.js'
import { scopeHash } from './delegation.js'
import type { DelegationTerms } from './scope-subset.js'
import type { Signer } from './signer.js'

export interface WidenedDelegationOptions {
  /** The trusted authority (A), signer of the delegation link. */
  authority: Signer
  /** The agent delegated to (B), signer of the child. */
  delegatee: Signer
  /** The child's subject (C). */
  subject: string
  /** Unix seconds. */
  now: number
  /** The grant A delegates, default "GET /pets". */
  delegatedTool?: string
}

/**
 * The attack of issue 23: A signs a link delegating `{grants: [http GET /pets]}` (its scope_hash only)
 * to B; B signs a child for C granting every tool of every server. Gate refuses it.
 */
export function widenedDelegation(options: WidenedDelegationOptions): CapabilityToken {
  const delegated: CapabilityScope = { grants: [{ server_id: 'http', tool_name: options.delegatedTool ?? 'GET /pets' }] }
  const link = signDelegationLink(
    { capability_id: 'cap-delegated-to-b', delegatee: options.delegatee.publicKey, scope_hash: scopeHash(delegated), timestamp: options.now - 60 },
    options.authority,
  )
  return signCapability(
    {
      schema: 'gate.capability.v1',
      id: 'cap-widened-child',
      subject: options.subject,
      scope: { grants: [{ server_id: '*', tool_name: '*' }] },
      issued_at: options.now - 30,
      expires_at: options.now + 3600,
      delegation_chain: [link],
    },
    options.delegatee,
  )
}

export interface DelegatedChildOptions {
  /** The trusted root, then each agent along the chain; the last one signs the child. */
  signers: readonly Signer[]
  /** What each link delegates, root first (one per link: signers.length - 1 of them). */
  delegated: readonly DelegationTerms[]
  /** What the child holds. */
  child: DelegationTerms
  subject: string
  /** Unix seconds: links are dated before it, the child issued at it. */
  now: number
  id?: string
}

/** A child signed by the last delegatee of a chain whose every link states the terms it delegates. */
export function delegatedChild(options: DelegatedChildOptions): CapabilityToken {
  const { signers, delegated } = options
  const chain: DelegationLink[] = delegated.map((terms, i) =>
    signDelegationLink(
      { capability_id: `cap-link-${i}`, delegatee: signers[i + 1]!.publicKey, timestamp: options.now - 100 + i, ...definedTerms(terms) },
      signers[i]!,
    ),
  )
  return signCapability(
    {
      schema: 'gate.capability.v1',
      id: options.id ?? 'cap-delegated-child',
      subject: options.subject,
      issued_at: options.now,
      delegation_chain: chain,
      ...definedTerms(options.child),
    },
    signers[signers.length - 1]!,
  )
}

export interface SiblingChildrenOptions {
  /** The trusted authority: signs the one delegation link. */
  authority: Signer
  /** The delegatee: signs every child, each with an id of its choosing. */
  delegatee: Signer
  /** The capability the link delegates (its `capability_id`). */
  capabilityId: string
  /** What the link delegates. */
  delegated: DelegationTerms
  /** What each child holds, default what the link delegates. */
  child?: DelegationTerms
  subject: string
  /** Unix seconds: the link is dated 60 s before it, the children 30 s before. */
  now: number
  count: number
  /** The children's ids, default `cap-sibling-<n>`. */
  id?: (n: number) => string
}

/**
 * The siblings of issue 37: one link from the authority to a delegatee, and `count` children the
 * delegatee signs under it, each holding up to everything the link delegates.
 */
export function siblingChildren(options: SiblingChildrenOptions): CapabilityToken[] {
  const link = signDelegationLink(
    { capability_id: options.capabilityId, delegatee: options.delegatee.publicKey, timestamp: options.now - 60, ...definedTerms(options.delegated) },
    options.authority,
  )
  const id = options.id ?? (n => `cap-sibling-${n}`)
  return Array.from({ length: options.count }, (_, n) =>
    signCapability(
      { schema: 'gate.capability.v1', id: id(n + 1), subject: options.subject, issued_at: options.now - 30, delegation_chain: [link], ...definedTerms(options.child ?? options.delegated) },
      options.delegatee,
    ),
  )
}

function definedTerms(terms: DelegationTerms): DelegationTerms {
  const out: DelegationTerms = { scope: terms.scope, expires_at: terms.expires_at }
  if (terms.budget_share_bps !== undefined) out.budget_share_bps = terms.budget_share_bps
  if (terms.aggregate_invocation_budget !== undefined) out.aggregate_invocation_budget = terms.aggregate_invocation_budget
  return out
}

/**
 * A token in the shapes the other implementation of the protocol issues (issue 23, point 4): signed
 * by a trusted issuer, its delegation chain provenance whose links (signed by their delegators,
 * connected, in non-decreasing time) are dated after the token's issued_at, carry no scope_hash, and
 * need not end at the subject. `links` 0..5; `scope` default one tool grant.
 */
export function provenanceToken(options: { issuer: Signer; agents: readonly Signer[]; subject: string; now: number; links: number; scope?: CapabilityScope }): CapabilityToken {
  const chain: DelegationLink[] = []
  for (let i = 0; i < options.links; i++) {
    const delegator = i === 0 ? options.issuer : options.agents[i - 1]!
    chain.push(signDelegationLink({ capability_id: `cap-provenance-${i}`, delegatee: options.agents[i]!.publicKey, timestamp: options.now + 10 + i }, delegator))
  }
  return signCapability(
    {
      schema: 'gate.capability.v1',
      id: `cap-provenance-${options.links}`,
      subject: options.subject,
      scope: options.scope ?? { grants: [{ server_id: 'http', tool_name: 'POST /pets', operations: ['invoke'] }] },
      issued_at: options.now,
      expires_at: options.now + 3600,
      ...(chain.length > 0 ? { delegation_chain: chain } : {}),
    },
    options.issuer,
  )
}
