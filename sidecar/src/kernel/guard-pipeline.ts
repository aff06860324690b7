// The guards in their fixed order (docs/kernel.md), shared by the HTTP kernel and the tool-call path:
//   0. AuthorityBoundaryGuard  an authorization extension the authority does not enforce is denied
//   1. RevocationGuard         a revoked capability is denied before evaluation
//   2. DefaultPolicyGuard      SessionAllow: allow, then only a restricted route's approval and the budget guard
//      CapabilityGuard         DenyByDefault: token valid and verified, id matches, the call is within it
//   3. ToolInputGuard          tool calls: an unknown tool, arguments the input_schema rejects
//      SessionLimitGuard       agent sessions, when a limit is set: calls per session, delegation depth
//   4. ApprovalGuard           when the route or tool requires approval
//   5. NonceGuard              DenyByDefault HTTP requests, when strict nonces are on
//   6. BudgetGuard             last, so a call denied above never spends an invocation or a cost
import { randomBytes } from 'node:crypto'
import type { GuardEvidence } from '@gate/sdk'
import { ApprovalGuard } from './guards/approval.js'
import { AuthorityBoundaryGuard } from './guards/authority-boundary.js'
import { BudgetGuard } from './guards/budget.js'
import { CapabilityGuard } from './guards/capability.js'
import { DefaultPolicyGuard } from './guards/default-policy.js'
import type { GuardContext, GuardOutcome } from './guards/guard.js'
import { NonceGuard } from './guards/nonce.js'
import { RevocationGuard } from './guards/revocation.js'
import { SessionLimitGuard, type SessionLimits } from './guards/session-limit.js'
import { ToolInputGuard } from './guards/tool-input.js'
import type { KernelPorts } from './ports.js'

/** A guard's decision that stops the pipeline. */
export type FailedGuard = Extract<GuardOutcome, { pass: false }>

export interface GuardPipelineOptions {
  /** Keys capability tokens may be issued by. */
  trustedIssuers: () => Iterable<string>
  /** This authority's own keys (execution nonces are signed with them). */
  ownKeys: () => Iterable<string>
  strictNonces: boolean
  /** --max-session-calls, --max-delegation-depth; default none. */
  sessionLimits?: SessionLimits
}

export class GuardPipeline {
  readonly #boundary = new AuthorityBoundaryGuard()
  readonly #revocation: RevocationGuard
  readonly #defaultPolicy = new DefaultPolicyGuard()
  readonly #capability: CapabilityGuard
  readonly #toolInput = new ToolInputGuard()
  readonly #sessionLimit: SessionLimitGuard
  readonly #approval: ApprovalGuard
  readonly #nonce: NonceGuard
  readonly #budget: BudgetGuard
  readonly #strictNonces: boolean

  constructor(ports: Pick<KernelPorts, 'revocations' | 'approvals' | 'nonces' | 'budgets'>, options: GuardPipelineOptions) {
    this.#revocation = new RevocationGuard(ports.revocations)
    this.#capability = new CapabilityGuard(options.trustedIssuers)
    this.#approval = new ApprovalGuard(ports.approvals, () => randomBytes(16).toString('hex'))
    this.#nonce = new NonceGuard(ports.nonces, options.ownKeys)
    this.#budget = new BudgetGuard(ports.budgets)
    this.#strictNonces = options.strictNonces
    this.#sessionLimit = new SessionLimitGuard(options.sessionLimits ?? { maxCalls: undefined, maxDelegationDepth: undefined })
  }

  /** Runs the guards in order, appending their evidence; the first that fails decides (undefined: allow). */
  async run(ctx: GuardContext, evidence: GuardEvidence[]): Promise<FailedGuard | undefined> {
    const run = async (outcome: GuardOutcome | Promise<GuardOutcome>) => {
      const o = await outcome
      if (o.pass) {
        if (o.evidence !== undefined) evidence.push(o.evidence)
        return undefined
      }
      evidence.push(o.evidence)
      return o
    }
    const { subject } = ctx
    const outside = await run(this.#boundary.check(ctx))
    if (outside !== undefined) return outside
    const denied = await run(this.#revocation.check(ctx))
    if (denied !== undefined) return denied
    if (subject.policy === 'SessionAllow') {
      await run(this.#defaultPolicy.check(ctx))
    } else {
      const capability = await run(this.#capability.check(ctx))
      if (capability !== undefined) return capability
    }
    const input = await run(this.#toolInput.check(ctx))
    if (input !== undefined) return input
    if (this.#sessionLimit.enabled) {
      const limited = await run(this.#sessionLimit.check(ctx))
      if (limited !== undefined) return limited
    }
    if (subject.approvalRequired) {
      const approval = await run(this.#approval.check(ctx))
      if (approval !== undefined) return approval
    }
    if (subject.policy === 'DenyByDefault' && subject.strictNonce && this.#strictNonces) {
      const nonce = await run(this.#nonce.check(ctx))
      if (nonce !== undefined) return nonce
    }
    return run(this.#budget.check(ctx))
  }
}
