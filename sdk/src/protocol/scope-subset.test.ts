import t from 'tap'
import fc from 'fast-check'
import { delegatedChild } from './capability-examples.js'
import { verifyCapability } from './capability.js'
import { exampleSigner } from './receipt-examples.js'
import { attenuationProblem, scopeSubsetProblem, toolGrantSubsetProblem, type DelegationTerms } from './scope-subset.js'
import { toolPatternCovers } from './tool-pattern.js'
import type { AggregateInvocationBudget, ToolGrant } from '../types.js'

const authority = exampleSigner('ed25519', 1)
const agent = exampleSigner('ed25519', 2)
const subject = exampleSigner('ed25519', 3).publicKey
const NOW = 1_763_700_000

/** The child's choices, derived from a generated seed so a failing case replays (mulberry32). */
class SeededRandom {
  #state: number
  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  #next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let x = this.#state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [min, max]. */
  nextInt(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1))
  }

  nextBoolean(): boolean {
    return this.#next() < 0.5
  }
}

// Each tool pattern covers the ones after it, so a child picking a later one narrows and an earlier one widens.
const TOOL_LADDER = ['*', 'GET *', 'GET /a/*', 'GET /a/b'] as const
const OPERATIONS = ['invoke', 'read_result', 'delegate'] as const
const CONSTRAINTS = [{ type: 'path_prefix', value: '/data' }, { type: 'max_length', value: 100 }, { type: 'custom', value: ['k', 'v'] }]

/** A parent grant of server srv{i}: only it can cover a child grant of that server. */
const parentGrant = (i: number) =>
  fc.record(
    {
      level: fc.integer({ min: 0, max: TOOL_LADDER.length - 1 }),
      operations: fc.option(fc.subarray([...OPERATIONS], { minLength: 1 }), { nil: undefined }),
      constraints: fc.subarray(CONSTRAINTS),
      max_invocations: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
      max_cost_per_invocation: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
      max_total_cost: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined }),
      dpop_required: fc.option(fc.constant(true as const), { nil: undefined }),
    },
    { requiredKeys: ['level', 'constraints'] },
  ).map(g => ({ ...g, server_id: `srv${i}` }))

type ParentGrantSpec = { server_id: string; level: number; operations?: string[]; constraints: object[]; max_invocations?: number; max_cost_per_invocation?: number; max_total_cost?: number; dpop_required?: true }

function toGrant(g: ParentGrantSpec): ToolGrant {
  const grant: ToolGrant = { server_id: g.server_id, tool_name: TOOL_LADDER[g.level]! }
  if (g.operations !== undefined) grant.operations = [...g.operations]
  if (g.constraints.length > 0) grant.constraints = [...g.constraints] as ToolGrant['constraints']
  if (g.max_invocations !== undefined) grant.max_invocations = g.max_invocations
  if (g.max_cost_per_invocation !== undefined) grant.max_cost_per_invocation = { units: g.max_cost_per_invocation, currency: 'USD' }
  if (g.max_total_cost !== undefined) grant.max_total_cost = { units: g.max_total_cost, currency: 'USD' }
  if (g.dpop_required !== undefined) grant.dpop_required = g.dpop_required
  return grant
}

const parentTerms = fc
  .record({
    grants: fc.integer({ min: 1, max: 3 }).chain(n => fc.tuple(...Array.from({ length: n }, (_, i) => parentGrant(i)))),
    resources: fc.subarray(['res://r0/x', 'res://r1/*']),
    prompts: fc.subarray(['p0', 'p1*']),
    expiresIn: fc.integer({ min: 60, max: 7200 }),
    share: fc.option(fc.integer({ min: 0, max: 9999 }), { nil: undefined }),
    aggregate: fc.option(
      fc.oneof(
        fc.record({ scope: fc.constant('capability' as const), max_invocations: fc.integer({ min: 0, max: 100 }) }),
        fc.record({ scope: fc.constant('delegation_family' as const), max_invocations: fc.integer({ min: 0, max: 100 }), root_binding: fc.constant('root-1') }),
      ),
      { nil: undefined },
    ),
  })
  .map(p => ({ ...p, grants: p.grants as ParentGrantSpec[] }))

type ParentSpec = typeof parentTerms extends fc.Arbitrary<infer T> ? T : never

function toTerms(p: ParentSpec): DelegationTerms {
  const terms: DelegationTerms = {
    scope: {
      grants: p.grants.map(toGrant),
      resource_grants: p.resources.map(uri_pattern => ({ uri_pattern, operations: ['read'] })),
      prompt_grants: p.prompts.map(prompt_name => ({ prompt_name })),
    },
    expires_at: NOW + p.expiresIn,
  }
  if (p.share !== undefined) terms.budget_share_bps = p.share
  if (p.aggregate !== undefined) terms.aggregate_invocation_budget = p.aggregate as AggregateInvocationBudget
  return terms
}

/** A child no wider than the parent in any dimension (every choice narrows or keeps). */
function narrowed(p: ParentSpec, r: SeededRandom): DelegationTerms {
  const pick = <T>(xs: readonly T[]) => xs[r.nextInt(0, xs.length - 1)]!
  const below = (n: number) => r.nextInt(0, n)
  const grants: ToolGrant[] = []
  for (const g of p.grants) {
    if (r.nextBoolean() && r.nextBoolean()) continue // dropped: narrower
    const child: ToolGrant = { server_id: g.server_id, tool_name: TOOL_LADDER[r.nextInt(g.level, TOOL_LADDER.length - 1)]! }
    const ops = g.operations ?? [...OPERATIONS]
    if (g.operations !== undefined || r.nextBoolean()) child.operations = ops.filter(() => r.nextBoolean())
    const extra = CONSTRAINTS.filter(c => !g.constraints.includes(c) && r.nextBoolean())
    if (g.constraints.length + extra.length > 0) child.constraints = [...extra, ...g.constraints] as ToolGrant['constraints']
    if (g.max_invocations !== undefined) child.max_invocations = below(g.max_invocations)
    else if (r.nextBoolean()) child.max_invocations = below(20)
    for (const field of ['max_cost_per_invocation', 'max_total_cost'] as const) {
      const cap = g[field]
      if (cap !== undefined) child[field] = { units: below(cap), currency: 'USD' }
      else if (r.nextBoolean()) child[field] = { units: below(100), currency: pick(['USD', 'EUR']) }
    }
    if (g.dpop_required === true || r.nextBoolean()) child.dpop_required = true
    grants.push(child)
  }
  const terms: DelegationTerms = {
    scope: {
      grants,
      resource_grants: p.resources.filter(() => r.nextBoolean()).map(u => ({ uri_pattern: u.endsWith('*') && r.nextBoolean() ? u.replace('*', 'deeper/x') : u, operations: ['read'] })),
      prompt_grants: p.prompts.filter(() => r.nextBoolean()).map(n => ({ prompt_name: n.endsWith('*') && r.nextBoolean() ? `${n.slice(0, -1)}-narrow` : n })),
    },
    expires_at: NOW + 1 + below(p.expiresIn - 1),
  }
  if (p.share !== undefined) terms.budget_share_bps = below(p.share)
  else if (r.nextBoolean()) terms.budget_share_bps = below(10_000)
  const a = p.aggregate
  if (a?.scope === 'delegation_family') terms.aggregate_invocation_budget = { ...a }
  else if (a !== undefined) terms.aggregate_invocation_budget = { scope: pick(['capability', 'delegation_family'] as const), max_invocations: below(a.max_invocations) }
  else if (r.nextBoolean()) terms.aggregate_invocation_budget = { scope: 'capability', max_invocations: below(10) }
  return terms
}

type Widening = { dimension: string; apply(child: DelegationTerms): void }

/** Every way of making `child` wider than `p` in exactly one dimension, given p's values. */
function widenings(p: ParentSpec): Widening[] {
  const out: Widening[] = []
  const addGrant = (dimension: string, g: ParentGrantSpec, change: (grant: ToolGrant) => void) =>
    out.push({ dimension, apply: c => { const grant = toGrant(g); change(grant); c.scope.grants = [...(c.scope.grants ?? []), grant] } })
  for (const g of p.grants) {
    if (g.level > 0) addGrant('tool pattern', g, x => (x.tool_name = TOOL_LADDER[g.level - 1]!))
    addGrant('server', g, x => (x.server_id = '*'))
    if (g.operations !== undefined) {
      addGrant('operations (unrestricted)', g, x => delete x.operations)
      const missing = OPERATIONS.find(op => !g.operations!.includes(op))
      if (missing !== undefined) addGrant('operations (added)', g, x => x.operations!.push(missing))
    }
    if (g.constraints.length > 0) addGrant('constraints', g, x => (x.constraints = x.constraints!.slice(1)))
    if (g.max_invocations !== undefined) {
      addGrant('max_invocations', g, x => (x.max_invocations = g.max_invocations! + 1))
      addGrant('max_invocations (unlimited)', g, x => (x.max_invocations = null))
    }
    for (const field of ['max_cost_per_invocation', 'max_total_cost'] as const) {
      const cap = g[field]
      if (cap === undefined) continue
      addGrant(`${field} units`, g, x => (x[field] = { units: cap + 1, currency: 'USD' }))
      addGrant(`${field} currency`, g, x => (x[field] = { units: cap, currency: 'EUR' }))
      addGrant(`${field} dropped`, g, x => delete x[field])
    }
    if (g.dpop_required === true) addGrant('dpop_required', g, x => (x.dpop_required = false))
  }
  out.push({ dimension: 'a server not delegated', apply: c => (c.scope.grants = [...(c.scope.grants ?? []), { server_id: 'srv-other', tool_name: 'GET /a/b' }]) })
  out.push({ dimension: 'expiry', apply: c => (c.expires_at = NOW + p.expiresIn + 1) })
  out.push({ dimension: 'resource grant', apply: c => (c.scope.resource_grants = [...(c.scope.resource_grants ?? []), { uri_pattern: 'res://*', operations: ['read'] }]) })
  out.push({ dimension: 'resource operations', apply: c => (c.scope.resource_grants = [{ uri_pattern: p.resources[0] ?? 'res://r9/x', operations: ['read', 'subscribe'] }]) })
  out.push({ dimension: 'prompt grant', apply: c => (c.scope.prompt_grants = [...(c.scope.prompt_grants ?? []), { prompt_name: 'p2' }]) })
  if (p.share !== undefined) {
    out.push({ dimension: 'budget_share_bps', apply: c => (c.budget_share_bps = p.share! + 1) })
    out.push({ dimension: 'budget_share_bps dropped', apply: c => delete c.budget_share_bps })
  }
  const a = p.aggregate
  if (a !== undefined) {
    out.push({ dimension: 'aggregate budget dropped', apply: c => delete c.aggregate_invocation_budget })
    out.push({ dimension: 'aggregate maximum', apply: c => (c.aggregate_invocation_budget = { ...a, max_invocations: a.max_invocations + 1 }) })
    if (a.scope === 'delegation_family') {
      out.push({ dimension: 'family root binding', apply: c => (c.aggregate_invocation_budget = { ...a, root_binding: 'root-2' }) })
      out.push({ dimension: 'family to capability', apply: c => (c.aggregate_invocation_budget = { scope: 'capability', max_invocations: a.max_invocations }) })
    }
  }
  return out
}

function childToken(parent: DelegationTerms, child: DelegationTerms) {
  return delegatedChild({ signers: [authority, agent], delegated: [parent], child, subject, now: NOW })
}

t.test('property: every equal or narrower child verifies', async t => {
  fc.assert(
    fc.property(parentTerms, fc.integer(), (p, seed) => {
      const parent = toTerms(p)
      const child = narrowed(p, new SeededRandom(seed))
      const problem = attenuationProblem(child, parent)
      if (problem !== undefined) throw new Error(`a narrower child was refused: ${problem}\nparent ${JSON.stringify(parent)}\nchild ${JSON.stringify(child)}`)
      const v = verifyCapability(childToken(parent, child), { trustedIssuers: [authority.publicKey], now: NOW })
      if (!v.ok) throw new Error(`${v.code}: ${v.reason}`)
      const equal = verifyCapability(childToken(parent, parent), { trustedIssuers: [authority.publicKey], now: NOW })
      if (!equal.ok) throw new Error(`an equal child was refused: ${equal.reason}`)
    }),
    { numRuns: 300, seed: 2323, endOnFailure: true },
  )
  t.pass('300 random parent/child pairs')
})

t.test('property: every child wider than its parent in any dimension is refused', async t => {
  const seen = new Set<string>()
  fc.assert(
    fc.property(parentTerms, fc.integer(), fc.nat(), (p, seed, which) => {
      const parent = toTerms(p)
      const child = narrowed(p, new SeededRandom(seed))
      const options = widenings(p)
      const widening = options[which % options.length]!
      widening.apply(child)
      seen.add(widening.dimension)
      if (attenuationProblem(child, parent) === undefined) throw new Error(`widened ${widening.dimension} and still a subset\nparent ${JSON.stringify(parent)}\nchild ${JSON.stringify(child)}`)
      const v = verifyCapability(childToken(parent, child), { trustedIssuers: [authority.publicKey], now: NOW })
      if (v.ok || v.code !== 'scope_widened') throw new Error(`widened ${widening.dimension}: ${v.ok ? 'verified' : v.code}`)
    }),
    { numRuns: 600, seed: 2324, endOnFailure: true },
  )
  t.ok(seen.size >= 20, `widened in ${seen.size} dimensions: ${[...seen].sort().join(', ')}`)
})

t.test('tool patterns: the grammar covers exactly what it matches', async t => {
  const covers: [string, string][] = [
    ['*', 'anything'],
    ['GET *', 'GET /pets/*'],
    ['* /pets', 'GET /pets'],
    ['POST /pets/*', 'POST /pets/{id}/adopt'],
    ['POST /pets/*', 'POST /pets/{id}/*'],
    ['POST /pets/*', 'POST /pets'],
    ['createPet', 'createPet'],
  ]
  for (const [parent, child] of covers) t.ok(toolPatternCovers(parent, child), `${parent} covers ${child}`)
  const not: [string, string][] = [
    ['GET *', '* /pets'],
    ['POST /pets/*', 'POST /petsx'],
    ['POST /pets/*', 'POST *'],
    ['POST /pets', 'createPet'],
    ['createPet', 'POST /pets'],
    ['GET /a', '*'],
  ]
  for (const [parent, child] of not) t.notOk(toolPatternCovers(parent, child), `${parent} does not cover ${child}`)
})

t.test('a dimension the verifier cannot compare is never a subset', async t => {
  const base: ToolGrant = { server_id: 'http', tool_name: 'GET /a' }
  t.match(toolGrantSubsetProblem({ ...base, rate_limit: 5 } as ToolGrant, base), /cannot be compared/)
  t.match(toolGrantSubsetProblem(base, { ...base, rate_limit: 5 } as ToolGrant), /cannot be compared/)
  t.match(scopeSubsetProblem({ grants: [base], tools: [] } as never, { grants: [base] }), /cannot be compared/)
  t.match(scopeSubsetProblem({ resource_grants: [{ uri: 'x', mode: 'rw' }] }, { resource_grants: [{ uri: 'x', mode: 'r' }] }), /not equal to a delegated entry/)
  t.equal(scopeSubsetProblem({ resource_grants: [{ uri: 'x', mode: 'r' }] }, { resource_grants: [{ uri: 'x', mode: 'r' }] }), undefined, 'an unknown shape is compared by equality')
  t.match(scopeSubsetProblem({ grants: 'all' } as never, { grants: [base] }), /not an array/)
})

