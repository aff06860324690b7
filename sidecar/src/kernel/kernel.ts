// The evaluator: route match, then guards in a fixed order (guard-pipeline.ts), then a signed receipt
// that is durably stored before the answer leaves (docs/kernel.md). Used by the sidecar's
// /gate/evaluate and, in process, by the reverse proxy; agents' tool calls go through the same guards
// in tool-call-kernel.ts.
import {
  callerIdentityHash,
  contentHash,
  SAFE_METHODS,
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
import { matchRoute, type RouteMatch, type RouteTable } from '@gate/openapi'
import { readDeclaredCost } from './declared-cost.js'
import { signExecutionNonce } from './execution-nonce.js'
import { financialRecord } from './financial-record.js'
import { CapabilityRecorder, readPresentedCapability, type PresentedCapability } from './presented-capability.js'
import { httpSubject } from './grants.js'
import { GuardPipeline } from './guard-pipeline.js'
import type { GuardContext } from './guards/guard.js'
import type { SessionLimits } from './guards/session-limit.js'
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
  /** Issuer keys followed at run time (trust-control's authority, fleet/authority-follower.ts). */
  followedIssuers?: () => readonly string[]
  strictNonces: boolean
  /** Limits on agent sessions (SessionLimitGuard); default none. */
  sessionLimits?: SessionLimits
  nonceTtlSeconds: number
  approvalTtlSeconds: number
  /** Unix seconds; injectable for tests. */
  clock?: () => number
  /** Told of every decision and every failed evaluation (metrics, the decision log). */
  observer?: KernelObserver
}

/** What the kernel reports after each evaluation (observability/decision-observer.ts). */
export interface KernelObserver {
  onDecision(evaluation: Evaluation, route: RouteMatch, durationSeconds: number): void
  onFailure(err: unknown, request: GateHttpRequest, durationSeconds: number): void
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
  /**
   * The route `request` matched, from this kernel's `matchRoute` (the in-process proxy matches before it
   * evaluates, to fill `route_pattern`): not matched again. Never taken from a remote client.
   */
  route?: RouteMatch
  /** Set only when tracing is on (observability/evaluation-trace.ts): the steps' spans and the trace id. */
  trace?: EvaluationTrace
}

/**
 * The evaluation's steps as the tracer sees them. The kernel calls it only when the input carries one,
 * so with tracing off the path pays one `undefined` check per step.
 */
export interface EvaluationTrace {
  /** The W3C trace id (32 lowercase hex), recorded in the receipt's metadata as `gate_trace_id`. */
  readonly traceId: string
  guardsStarted(): void
  guardsEnded(verdict: Verdict, evidence: readonly GuardEvidence[]): void
  /** The receipt is handed to the writer (signing and the group commit). */
  writeStarted(): void
  writeEnded(receiptId: string): void
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
  /** The guards in their fixed order; the tool-call path runs the same ones. */
  readonly guards: GuardPipeline
  /** What a receipt may say about a presented capability (only authentic ids are filed under). */
  readonly capabilityRecorder: CapabilityRecorder
  readonly #callerHashes = new Map<string, string>()

  constructor(options: KernelOptions) {
    this.#options = options
    this.signer = options.signer
    this.policyHash = options.policyHash
    this.#ports = options.ports
    this.#clock = options.clock ?? (() => Math.floor(Date.now() / 1000))
    this.guards = new GuardPipeline(options.ports, { trustedIssuers: () => this.trustedIssuers(), ownKeys: () => this.ownKeys(), strictNonces: options.strictNonces, sessionLimits: options.sessionLimits })
    this.capabilityRecorder = new CapabilityRecorder(() => this.trustedIssuers())
  }

  /** Where receipts, approvals and nonces go (the tool-call path writes through the same ports). */
  get ports(): KernelPorts {
    return this.#ports
  }

  /** Pending approval and execution nonce lifetimes, seconds. */
  get lifetimes(): { approvalTtlSeconds: number; nonceTtlSeconds: number } {
    return { approvalTtlSeconds: this.#options.approvalTtlSeconds, nonceTtlSeconds: this.#options.nonceTtlSeconds }
  }

  /** This authority's public keys: the current one and any earlier ones kept after rotation. */
  ownKeys(): string[] {
    return [this.signer.publicKey, ...(this.#options.previousKeys?.() ?? [])]
  }

  trustedIssuers(): string[] {
    const followed = this.#options.followedIssuers?.() ?? []
    return [...this.ownKeys(), ...this.#options.trustedIssuers, ...followed]
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
    const observer = this.#options.observer
    if (observer === undefined) return this.#evaluate(input, input.route ?? this.matchRoute(input.request.method, input.request.path))
    const started = performance.now()
    const route = input.route ?? this.matchRoute(input.request.method, input.request.path)
    try {
      const evaluation = await this.#evaluate(input, route)
      observer.onDecision(evaluation, route, (performance.now() - started) / 1000)
      return evaluation
    } catch (err) {
      observer.onFailure(err, input.request, (performance.now() - started) / 1000)
      throw err
    }
  }

  async #evaluate(input: EvaluateInput, route: RouteMatch): Promise<Evaluation> {
    const { request } = input
    const now = this.#clock()
    const routePattern = route.pattern
    const query = withoutCapabilityParameter(request.query)
    const presented = await readPresentedCapability(request, input.capabilityHeader ?? request.query?.gate_capability, input.authenticated === true, this.#ports.capabilities)
    // a revocation another process wrote (gate trust serve) counts from the next request presenting
    // the capability: fail closed if the store cannot say
    if (presented.capabilityId !== null || (presented.token?.delegation_chain?.length ?? 0) > 0) await this.#ports.revocations.refresh?.()
    const ctx = this.#context(input, route, routePattern, query, now, presented)
    const evidence: GuardEvidence[] = []
    const trace = input.trace
    trace?.guardsStarted()
    const outcome = await this.guards.run(ctx, evidence)
    const verdict: Verdict = outcome === undefined ? { verdict: 'allow' } : outcome.verdict
    trace?.guardsEnded(verdict, evidence)
    const status = verdict.verdict === 'deny' ? (verdict.http_status ?? 403) : STATUS_FOR[verdict.verdict]
    const financial = financialRecord(ctx, verdict)
    // only an authentic token's id and subject go into the receipt's indexed fields
    const recorded = this.capabilityRecorder.record(presented, ctx.verifiedToken, { requestCapabilityId: request.capability_id })
    const metadata: Record<string, unknown> = { gate_http_status_scope: 'decision' }
    if (financial !== undefined) metadata.financial = financial.metadata
    if (recorded.presented !== undefined) metadata.gate_presented_capability = recorded.presented
    // the receipt leads to its trace (docs/observability.md, "Traces"); signed with the rest
    if (trace !== undefined) metadata.gate_trace_id = trace.traceId

    const context = { tenant: request.caller.tenant ?? null, subjectKey: recorded.subjectKey }
    const requestId = ctx.boundRequestId ?? request.request_id
    trace?.writeStarted()
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
      executionNonce = signExecutionNonce(this.signer, { requestId, ctx, now, ttlSeconds: this.lifetimes.nonceTtlSeconds })
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
    trace?.writeEnded(signed.receipt.id)
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
        expiresAt: now + this.lifetimes.approvalTtlSeconds,
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
      subject: httpSubject({ request, route, routePattern, query, cost: 'cost' in declared ? declared.cost : undefined }),
      callerIdentityHash: this.callerHash(request.caller),
      contentHash: contentHash({ body_hash: request.body_hash, method: request.method, path: request.path, query, route_pattern: routePattern }),
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

  // Most traffic comes from a few callers: their hashes are remembered, keyed by the identity's JSON
  // text (equal text, equal canonical form, equal hash). Bounded; cleared when full.
  callerHash(caller: CallerIdentity): string {
    const key = JSON.stringify(caller)
    let hash = this.#callerHashes.get(key)
    if (hash === undefined) {
      hash = callerIdentityHash(caller)
      if (this.#callerHashes.size >= CALLER_HASH_CACHE_SIZE) this.#callerHashes.clear()
      this.#callerHashes.set(key, hash)
    }
    return hash
  }
}

/** The query without `gate_capability`: the token is a credential, not request content. */
export function withoutCapabilityParameter(query: Record<string, string> | undefined): Record<string, string> | undefined {
  if (query === undefined || !('gate_capability' in query)) return query
  const { gate_capability: _token, ...rest } = query
  return rest
}
