// The evaluator: route match, then guards in a fixed order, then a signed receipt that is durably
// stored before the answer leaves (docs/kernel.md). Used by the sidecar's /gate/evaluate and, in
// process, by the reverse proxy.
//
// Guard order:
//   0. AuthorityBoundaryGuard  a request carrying supplemental_authorization is denied (spec 02)
//   1. RevocationGuard      any route; a revoked capability is denied before evaluation
//   2. DefaultPolicyGuard   SessionAllow routes: allow, then only a restricted route's approval and the budget guard
//      CapabilityGuard      DenyByDefault routes: token valid and verified, id matches, the request is within it
//   3. ApprovalGuard        routes with x-gate-approval-required or x-gate-sensitivity: restricted
//   4. NonceGuard           DenyByDefault routes when strict nonces are on
//   5. BudgetGuard          last, so a request denied above never spends an invocation or a cost
import {
  callerIdentityHash,
  canonicalJson,
  contentHash,
  SAFE_METHODS,
  utf8,
  type CallerIdentity,
  type GateHttpRequest,
  type GuardEvidence,
  type HttpMethod,
  type HttpReceipt,
  type HttpReceiptBody,
  type SignedExecutionNonce,
  type Signer,
  type Verdict,
} from '@gate/sdk'
import { randomBytes } from 'node:crypto'
import { matchRoute, type RouteMatch, type RouteTable } from '../openapi/index.js'
import { readDeclaredCost } from './declared-cost.js'
import { financialRecord } from './financial-record.js'
import { CapabilityRecorder, readPresentedCapability, type PresentedCapability } from './presented-capability.js'
import { ApprovalGuard } from './guards/approval.js'
import { AuthorityBoundaryGuard } from './guards/authority-boundary.js'
import { BudgetGuard } from './guards/budget.js'
import { CapabilityGuard } from './guards/capability.js'
import { DefaultPolicyGuard } from './guards/default-policy.js'
import type { GuardContext, GuardOutcome } from './guards/guard.js'
import { NonceGuard } from './guards/nonce.js'
import { RevocationGuard } from './guards/revocation.js'
import type { KernelPorts } from './ports.js'
import type { ReceiptWriteContext, WrittenReceipt } from '../stores/receipt-writer.js'

export interface KernelOptions {
  /** The authority signer: nonces, and the key capability tokens must come from (`ports.receipts` signs receipts with the same key). */
  signer: Signer
  /** Route table from the OpenAPI document; null applies the method rule to every path. */
  routeTable: RouteTable | null
  /** SHA-256 hex of the loaded policy document bytes. */
  policyHash: string
  ports: KernelPorts
  /** Issuer keys trusted besides the signer's own (and its earlier keys). */
  trustedIssuers: readonly string[]
  /** Earlier public keys of this authority, still trusted after a rotation. */
  previousKeys?: () => readonly string[]
  strictNonces: boolean
  nonceTtlSeconds: number
  approvalTtlSeconds: number
  /** Unix seconds; injectable for tests. */
  clock?: () => number
}

export interface EvaluateInput {
  request: GateHttpRequest
  /** X-Gate-Capability header value of the evaluate call (or the proxied request). */
  capabilityHeader?: string
  /** X-Gate-Approval-Id header value. */
  approvalId?: string
  /** X-Gate-Execution-Nonce header value (already checked well-formed by the route). */
  nonceId?: string
  /** The caller presented the control token: a `capability_id` lookup is honoured (presented-capability.ts). */
  authenticated?: boolean
}

export interface Evaluation {
  verdict: Verdict
  receipt: HttpReceipt
  receiptJson: string
  /** The row columns the receipt does not carry (a finalized receipt copies them). */
  context: Pick<ReceiptWriteContext, 'tenant' | 'subjectKey'>
  evidence: GuardEvidence[]
  executionNonce?: SignedExecutionNonce
  approval?: { approval_id: string; resume_path: string }
  /** The HTTP status associated with the outcome (receipt `response_status`). */
  status: number
  /** The EvaluateResponse JSON, assembled around the receipt's stored bytes. */
  responseJson: string
}

const CALLER_HASH_CACHE_SIZE = 1024

const STATUS_FOR: Record<Verdict['verdict'], number> = { allow: 200, deny: 403, cancel: 500, incomplete: 428 }

export class Kernel {
  readonly signer: Signer
  readonly policyHash: string
  readonly #options: KernelOptions
  readonly #ports: KernelPorts
  readonly #clock: () => number
  readonly #boundary = new AuthorityBoundaryGuard()
  readonly #revocation: RevocationGuard
  readonly #defaultPolicy = new DefaultPolicyGuard()
  readonly #capability: CapabilityGuard
  readonly #approval: ApprovalGuard
  readonly #nonce: NonceGuard
  readonly #budget: BudgetGuard
  readonly #recorder: CapabilityRecorder
  readonly #callerHashes = new Map<string, string>()

  constructor(options: KernelOptions) {
    this.#options = options
    this.signer = options.signer
    this.policyHash = options.policyHash
    this.#ports = options.ports
    this.#clock = options.clock ?? (() => Math.floor(Date.now() / 1000))
    this.#revocation = new RevocationGuard(options.ports.revocations)
    this.#capability = new CapabilityGuard(() => this.trustedIssuers())
    this.#approval = new ApprovalGuard(options.ports.approvals, () => randomBytes(16).toString('hex'))
    this.#nonce = new NonceGuard(options.ports.nonces, () => this.ownKeys())
    this.#budget = new BudgetGuard(options.ports.budgets)
    this.#recorder = new CapabilityRecorder(() => this.trustedIssuers())
  }

  /** This authority's public keys: the current one and any earlier ones kept after rotation. */
  ownKeys(): string[] {
    return [this.signer.publicKey, ...(this.#options.previousKeys?.() ?? [])]
  }

  trustedIssuers(): string[] {
    return [...this.ownKeys(), ...this.#options.trustedIssuers]
  }

  now(): number {
    return this.#clock()
  }

  /** Matches a path against the route table, or applies the method rule. */
  matchRoute(method: HttpMethod, path: string): RouteMatch {
    if (this.#options.routeTable === null) {
      return { matched: false, pattern: path, decision: SAFE_METHODS.has(method) ? 'SessionAllow' : 'DenyByDefault', why: 'method' }
    }
    return matchRoute(this.#options.routeTable, method, path)
  }

  /** Evaluates one request, signs its receipt and waits until the receipt is durably stored. */
  async evaluate(input: EvaluateInput): Promise<Evaluation> {
    const { request } = input
    const now = this.#clock()
    const route = this.matchRoute(request.method, request.path)
    const routePattern = route.pattern
    const query = withoutCapabilityParameter(request.query)
    const presented = await readPresentedCapability(request, input.capabilityHeader ?? request.query?.gate_capability, input.authenticated === true, this.#ports.capabilities)
    // a revocation another process wrote (gate trust serve) counts from the next request presenting
    // the capability: fail closed if the store cannot say
    if (presented.capabilityId !== null || (presented.token?.delegation_chain?.length ?? 0) > 0) await this.#ports.revocations.refresh?.()
    const ctx = this.#context(input, route, routePattern, query, now, presented)
    const evidence: GuardEvidence[] = []
    const outcome = await this.#runGuards(ctx, evidence)
    const verdict: Verdict = outcome === undefined ? { verdict: 'allow' } : outcome.verdict
    const status = verdict.verdict === 'deny' ? (verdict.http_status ?? 403) : STATUS_FOR[verdict.verdict]
    const financial = financialRecord(ctx, verdict)
    // only an authentic token's id and subject go into the receipt's indexed fields
    const recorded = this.#recorder.record(presented, ctx.verifiedToken, { requestCapabilityId: request.capability_id })
    const metadata: Record<string, unknown> = { gate_http_status_scope: 'decision' }
    if (financial !== undefined) metadata.financial = financial.metadata
    if (recorded.presented !== undefined) metadata.gate_presented_capability = recorded.presented

    const context = { tenant: request.caller.tenant ?? null, subjectKey: recorded.subjectKey }
    const requestId = ctx.boundRequestId ?? request.request_id
    const writing = this.#ports.receipts.write(
      {
        request_id: requestId,
        route_pattern: routePattern,
        method: request.method,
        caller_identity_hash: ctx.callerIdentityHash,
        session_id: request.session_id ?? null,
        verdict,
        receipt_kind: 'mediated_decision',
        boundary_class: 'prevent',
        tool_origin: 'caller_executed',
        redaction_mode: 'none',
        evidence: evidence.length > 0 ? evidence : undefined,
        response_status: status,
        timestamp: now,
        content_hash: ctx.contentHash,
        policy_hash: this.policyHash,
        trust_level: 'mediated',
        capability_id: recorded.capabilityId,
        metadata,
      },
      { ...context, kind: 'decision', decisionReceiptId: null, ...financial?.columns },
    )
    let executionNonce: SignedExecutionNonce | undefined
    let issuing: Promise<void> | undefined
    if (outcome?.issueNonce === true) {
      executionNonce = this.#signNonce(requestId, ctx, now)
      issuing = this.#ports.nonces.issue({
        nonceId: executionNonce.nonce_id,
        requestId: executionNonce.request_id,
        callerIdentityHash: ctx.callerIdentityHash,
        method: request.method,
        routePattern,
        contentHash: ctx.contentHash,
        expiresAt: executionNonce.expires_at,
      })
    }
    // commit before reply: an acknowledged receipt id must never be lost
    const [signed] = await Promise.all([writing, issuing])
    let approval: Evaluation['approval']
    if (outcome?.approvalId !== undefined) {
      // the approval names its decision receipt, so it is recorded once that receipt is committed
      approval = { approval_id: outcome.approvalId, resume_path: `/approvals/${outcome.approvalId}/respond` }
      await this.#ports.approvals.create({
        approvalId: outcome.approvalId,
        requestId: signed.receipt.request_id,
        callerIdentityHash: ctx.callerIdentityHash,
        method: request.method,
        routePattern,
        contentHash: ctx.contentHash,
        decisionReceiptId: signed.receipt.id,
        createdAt: now,
        expiresAt: now + this.#options.approvalTtlSeconds,
      })
    }

    let responseJson = `{"verdict":${JSON.stringify(verdict)},"receipt":${signed.json},"evidence":${JSON.stringify(evidence)}`
    if (executionNonce !== undefined) responseJson += `,"execution_nonce":${JSON.stringify(executionNonce)}`
    if (approval !== undefined) responseJson += `,"approval":${JSON.stringify(approval)}`
    responseJson += '}'
    return { verdict, receipt: signed.receipt, receiptJson: signed.json, context, evidence, executionNonce, approval, status, responseJson }
  }

  /**
   * The finalized receipt of a forwarded or answered request (spec 01): a re-signed copy of the
   * decision receipt with the answered status, a fresh timestamp, scope `final` and the decision
   * receipt id in metadata. Stored before it resolves.
   */
  async finalize(decision: Pick<Evaluation, 'receipt' | 'context'>, answeredStatus: number): Promise<WrittenReceipt> {
    const { id: _id, signature: _sig, ...body } = decision.receipt
    const metadata = { ...(body.metadata ?? {}), gate_http_status_scope: 'final', gate_decision_receipt_id: decision.receipt.id }
    return this.#ports.receipts.write(
      { ...body, response_status: answeredStatus, timestamp: this.#clock(), metadata },
      { ...decision.context, kind: 'final', decisionReceiptId: decision.receipt.id },
    )
  }

  /** Signs and durably stores a receipt for a non-request event (approval transition, revocation). */
  recordEvent(body: HttpReceiptBody, context: Pick<ReceiptWriteContext, 'tenant' | 'subjectKey'> = {}): Promise<WrittenReceipt> {
    return this.#ports.receipts.write(body, { ...context, kind: 'decision', decisionReceiptId: null })
  }

  #context(input: EvaluateInput, route: RouteMatch, routePattern: string, query: Record<string, string> | undefined, now: number, presented: PresentedCapability): GuardContext {
    const { request } = input
    const declared = readDeclaredCost(request.governed_intent)
    return {
      request,
      route,
      routePattern,
      operationId: route.matched ? route.route.operationId : undefined,
      callerIdentityHash: this.#callerHash(request.caller),
      contentHash: contentHash({ body_hash: request.body_hash, method: request.method, path: request.path, query, route_pattern: routePattern }),
      query,
      declaredCost: 'cost' in declared ? declared.cost : undefined,
      declaredCostProblem: 'problem' in declared ? declared.problem : undefined,
      now,
      presentedToken: presented.token,
      presentedTokenProblem: presented.problem,
      capabilityId: presented.capabilityId,
      approvalId: input.approvalId,
      nonceId: input.nonceId,
      presentedNonce: request.execution_nonce,
    }
  }

  async #runGuards(ctx: GuardContext, evidence: GuardEvidence[]): Promise<Extract<GuardOutcome, { pass: false }> | undefined> {
    const run = async (outcome: GuardOutcome | Promise<GuardOutcome>) => {
      const o = await outcome
      if (o.pass) {
        if (o.evidence !== undefined) evidence.push(o.evidence)
        return undefined
      }
      evidence.push(o.evidence)
      return o
    }
    const outside = await run(this.#boundary.check(ctx))
    if (outside !== undefined) return outside
    const denied = await run(this.#revocation.check(ctx))
    if (denied !== undefined) return denied
    if (ctx.route.decision === 'SessionAllow') {
      await run(this.#defaultPolicy.check(ctx))
    } else {
      const capability = await run(this.#capability.check(ctx))
      if (capability !== undefined) return capability
    }
    // spec 01: x-gate-sensitivity restricted always requires approval, whatever the policy decision
    if (ctx.route.matched && (ctx.route.route.approvalRequired || ctx.route.route.sensitivity === 'restricted')) {
      const approval = await run(this.#approval.check(ctx))
      if (approval !== undefined) return approval
    }
    if (ctx.route.decision === 'DenyByDefault') {
      if (this.#options.strictNonces) {
        const nonce = await run(this.#nonce.check(ctx))
        if (nonce !== undefined) return nonce
      }
    }
    return run(this.#budget.check(ctx))
  }

  // Most traffic comes from a few callers: their hashes are remembered, keyed by the identity's JSON
  // text (equal text, equal canonical form, equal hash). Bounded; cleared when full.
  #callerHash(caller: CallerIdentity): string {
    const key = JSON.stringify(caller)
    let hash = this.#callerHashes.get(key)
    if (hash === undefined) {
      hash = callerIdentityHash(caller)
      if (this.#callerHashes.size >= CALLER_HASH_CACHE_SIZE) this.#callerHashes.clear()
      this.#callerHashes.set(key, hash)
    }
    return hash
  }

  #signNonce(requestId: string, ctx: GuardContext, now: number): SignedExecutionNonce {
    const body = {
      schema: 'gate.execution_nonce.v1' as const,
      nonce_id: randomBytes(16).toString('hex'),
      request_id: requestId,
      caller_identity_hash: ctx.callerIdentityHash,
      method: ctx.request.method,
      route_pattern: ctx.routePattern,
      content_hash: ctx.contentHash,
      issued_at: now,
      expires_at: now + this.#options.nonceTtlSeconds,
      kernel_key: this.signer.publicKey,
    }
    return { ...body, signature: this.signer.sign(utf8(canonicalJson(body))) }
  }
}

/** The query without `gate_capability`: the token is a credential, not request content. */
export function withoutCapabilityParameter(query: Record<string, string> | undefined): Record<string, string> | undefined {
  if (query === undefined || !('gate_capability' in query)) return query
  const { gate_capability: _token, ...rest } = query
  return rest
}
