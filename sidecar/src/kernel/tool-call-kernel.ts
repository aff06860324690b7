// The kernel's tool-call path (spec 03, tool_call_request): an agent's call of one tool on one tool
// server is decided by the same guards as an HTTP request (guard-pipeline.ts): revocation, the
// operation's or the operator's policy, the token's grants and argument constraints (@gate/sdk
// authorizeCall), the edge's input check, approvals bound to the exact call, budgets. Every decision is
// a core receipt (`gate.receipt.v1`) written through the one receipt writer before the answer leaves;
// a call the tool server then did not complete gets a second, final receipt (`cancelled` or
// `incomplete`) naming the decision (docs/mcp.md). A request the tool server sent the agent during a call,
// relayed by the edge, is recorded as a child receipt (spec 03, "Child receipts") naming the call. The
// receipts of one agent session form its lineage (spec 03, "Receipt DAG"): each carries the session
// chain's members (`openChain`, @gate/sdk receipt-chain.ts), covered by its id and signature.
import {
  canonicalJson,
  kernelIdOf,
  LogicalClock,
  ReceiptChain,
  sha256Hex,
  uuidv7,
  verdictToDecision,
  type CoreReceipt,
  type GuardEvidence,
  type PendingLineage,
  type ToolCall,
  type Verdict,
} from '@gate/sdk'
import type { RelayedRequestRecord, ToolCallRequest, ToolPolicy } from '@gate/mcp'
import type { ListedReceiptInput } from '@gate/trust'
import { parseCapabilityToken } from './capability-token.js'
import type { PresentedCapability } from './presented-capability.js'
import { readDeclaredCost } from './declared-cost.js'
import { financialRecord } from './financial-record.js'
import type { DecisionSubject, GuardContext } from './guards/guard.js'
import type { EvaluationTrace, Kernel } from './kernel.js'
import type { CoreReceiptDraft, WrittenCoreReceipt } from '../stores/receipt-writer.js'

/** The method an approval of a tool call is bound to (its route pattern is `{server_id}:{tool}`). */
export const TOOL_CALL_BINDING_METHOD = 'tools/call'

/** Which calls of a tool need a token (declared by @gate/mcp, whose edge asks for decisions). */
export type { ToolPolicy }

/** One tool call to decide (spec 03 tool_call_request, as the MCP edge reads it; @gate/mcp ToolCallRequest). */
/** `trace`: set only when tracing is on (kernel.ts EvaluationTrace). */
export type ToolCallInput = ToolCallRequest & { trace?: EvaluationTrace }

/** A decided call: the verdict (with deny details), its signed, committed receipt, and a pending approval. */
export interface ToolCallDecision {
  requestId: string
  verdict: Verdict
  evidence: GuardEvidence[]
  receipt: CoreReceipt
  receiptJson: string
  approval?: { approval_id: string; resume_path: string; expires_at: number }
  /** The decision receipt's row context, for a final receipt. */
  context: { tenant: string | null; subjectKey: string | null }
  /** The session's lineage the decision joined: its final receipt joins it too. */
  chain?: ReceiptChain
}

/** How an allowed call ended when it did not complete: the client cancelled it, or the tool server failed. */
export interface ToolCallEnding {
  verdict: 'cancelled' | 'incomplete'
  reason: string
}

/** The tool-call path over a Kernel's guards, ports and signer. */
export class ToolCallKernel {
  readonly #kernel: Kernel
  readonly #children: ChildReceiptSink | undefined
  #clock: LogicalClock | undefined

  /** `children` stores child receipts (the receipt store's listed receipts); without it none are recorded. */
  constructor(kernel: Kernel, children?: ChildReceiptSink) {
    this.#kernel = kernel
    this.#children = children
  }

  /** A new lineage for one agent session, on this kernel's hybrid logical clock. */
  openChain(): ReceiptChain {
    this.#clock ??= new LogicalClock(kernelIdOf(this.#kernel.signer.publicKey), () => this.#kernel.now())
    return new ReceiptChain(this.#clock)
  }

  get kernel(): Kernel {
    return this.#kernel
  }

  /** Decides one call and commits its receipt before resolving. */
  async decide(input: ToolCallInput): Promise<ToolCallDecision> {
    const kernel = this.#kernel
    const ports = kernel.ports
    const now = kernel.now()
    const requestId = input.requestId ?? uuidv7()
    const parameters = input.params
    const parameterHash = sha256Hex(canonicalJson(parameters))
    const parsed = input.capabilityToken === undefined ? undefined : parseCapabilityToken(input.capabilityToken)
    const presentedToken = parsed !== undefined && 'token' in parsed ? parsed.token : undefined
    const presentedId = typeof presentedToken?.id === 'string' ? presentedToken.id : null
    // a revocation another process committed counts from the next call presenting the capability
    if (presentedId !== null || (presentedToken?.delegation_chain?.length ?? 0) > 0) await ports.revocations.refresh?.()
    const declared = readDeclaredCost(input.governedIntent)
    const cost = 'cost' in declared ? declared.cost : undefined
    const ctx: GuardContext = {
      subject: toolSubject(input, cost),
      callerIdentityHash: kernel.callerHash(input.caller),
      contentHash: toolCallContentHash(input.serverId, input.tool, parameterHash),
      now,
      presentedToken,
      presentedTokenProblem: parsed !== undefined && 'problem' in parsed ? parsed.problem : undefined,
      capabilityId: presentedId,
      declaredCost: cost,
      declaredCostProblem: 'problem' in declared ? declared.problem : undefined,
      approvalId: input.approvalId,
      nonceId: undefined,
      presentedNonce: undefined,
      // the edge counts the session; the depth is the delegation chain of the capability this call presents
      session: input.session === undefined ? undefined : { ...input.session, delegation_depth: presentedToken?.delegation_chain?.length ?? 0 },
    }
    const evidence: GuardEvidence[] = []
    const trace = input.trace
    trace?.guardsStarted()
    const outcome = await kernel.guards.run(ctx, evidence)
    const verdict: Verdict = outcome === undefined ? { verdict: 'allow' } : outcome.verdict
    trace?.guardsEnded(verdict, evidence)
    const financial = financialRecord(ctx, verdict)

    // Only an authentic token files the receipt under its id and agent (presented-capability.ts);
    // anything else presented is kept as a claim in metadata, so a forged token cannot file under a
    // victim's id.
    const presented: PresentedCapability = { token: presentedToken, problem: ctx.presentedTokenProblem, capabilityId: presentedId, ignoredCapabilityId: undefined }
    const recorded = kernel.capabilityRecorder.record(presented, ctx.verifiedToken, { requestCapabilityId: undefined })
    const metadata: Record<string, unknown> = { gate_request_id: requestId }
    if (recorded.presented !== undefined) metadata.gate_presented_capability = recorded.presented
    if (verdict.verdict === 'deny' && verdict.details !== undefined) metadata.gate_deny_details = verdict.details
    if (financial !== undefined) metadata.financial = financial.metadata
    if (input.modelMetadata !== undefined) metadata.model_metadata = { ...input.modelMetadata, provenance: 'asserted' }
    if (input.governedIntent !== undefined) metadata.governed_transaction = { intent_hash: sha256Hex(canonicalJson(input.governedIntent)) }
    if (input.sessionId !== undefined && input.sessionId !== null) metadata.gate_session_id = input.sessionId
    // the receipt leads to its trace (docs/observability.md, "Traces"); signed with the rest
    if (trace !== undefined) metadata.gate_trace_id = trace.traceId
    const context = { tenant: input.caller.tenant ?? null, subjectKey: recorded.subjectKey }
    const approvalId = outcome?.approvalId
    const lineage = input.chain?.beginCall()
    trace?.writeStarted()
    const written = await joinChain(lineage, () => ports.receipts.writeCore(
      {
        timestamp: now,
        capability_id: recorded.capabilityId ?? '',
        tool_server: input.serverId,
        tool_name: input.tool,
        action: { parameters, parameter_hash: parameterHash },
        ...RECEIPT_CONSTANTS,
        decision: verdictToDecision(verdict),
        content_hash: ctx.contentHash,
        policy_hash: kernel.policyHash,
        evidence: evidence.length > 0 ? evidence : undefined,
        metadata,
        tenant_id: context.tenant,
        ...lineage?.fields,
      },
      { requestId, ...context, kind: 'decision', decisionReceiptId: null, ...financial?.columns },
    ))
    trace?.writeEnded(written.receipt.id)
    let approval: ToolCallDecision['approval']
    if (approvalId !== undefined) {
      // the approval names its decision receipt, so it is recorded once that receipt is committed
      const expiresAt = now + kernel.lifetimes.approvalTtlSeconds
      await ports.approvals.create({
        approvalId,
        requestId,
        callerIdentityHash: ctx.callerIdentityHash,
        ...ctx.subject.bindings,
        contentHash: ctx.contentHash,
        decisionReceiptId: written.receipt.id,
        createdAt: now,
        expiresAt,
      })
      approval = { approval_id: approvalId, resume_path: `/approvals/${approvalId}/respond`, expires_at: expiresAt }
    }
    // spec 02 DenyDetails: the tool, and the receipt recording the denial
    if (verdict.verdict === 'deny') verdict.details = { ...verdict.details, tool_server: input.serverId, tool_name: input.tool, receipt_id: written.receipt.id }
    return { requestId, verdict, evidence, receipt: written.receipt, receiptJson: written.json, approval, context, chain: input.chain }
  }

  /**
   * The final receipt of an allowed call that did not complete (spec 03 decisions `cancelled` and
   * `incomplete`): the decision's tool, parameters and capability, a fresh timestamp, and the decision
   * receipt's id in metadata. Committed before it resolves.
   */
  finish(decision: ToolCallDecision, ending: ToolCallEnding): Promise<WrittenCoreReceipt> {
    const { id: _id, signature: _signature, kernel_key: _key, algorithm: _algorithm, bbs_signature: _bbs, ...body } = decision.receipt
    // the final follows from its decision, on the same chain
    const lineage = decision.chain?.follow([decision.receipt.id])
    const draft: CoreReceiptDraft = {
      ...body,
      timestamp: this.#kernel.now(),
      decision: { verdict: ending.verdict, reason: ending.reason },
      metadata: { ...(body.metadata ?? {}), gate_decision_receipt_id: decision.receipt.id },
      ...lineage?.fields,
    }
    return joinChain(lineage, () => this.#kernel.ports.receipts.writeCore(draft, { requestId: decision.requestId, ...decision.context, kind: 'final', decisionReceiptId: decision.receipt.id }))
  }

  /**
   * Records a request the tool server sent the agent during a call as a child receipt (spec 03: its
   * `session_id`, `parent_request_id`, `request_id`, `operation_kind`, `terminal_state`, `outcome_hash`,
   * `policy_hash` and `metadata`), content-addressed like every Gate receipt id and committed before it
   * resolves. The request's parameters and the agent's answer are kept as hashes only: a prompt or a
   * user's reply is the agent's content, not the policy's.
   */
  async recordRelayed(record: RelayedRequestRecord): Promise<{ id: string }> {
    if (this.#children === undefined) return { id: '' }
    const metadata: Record<string, unknown> = {
      timestamp: this.#kernel.now(),
      gate_tool_server: record.serverId,
      gate_request_hash: hashValue(record.params),
    }
    if (record.parentReceiptId !== undefined) metadata.gate_parent_receipt_id = record.parentReceiptId
    if (record.toolName !== undefined) metadata.gate_tool_name = record.toolName
    if (record.candidateParentRequestIds !== undefined) metadata.gate_candidate_parent_request_ids = record.candidateParentRequestIds
    if (record.parentRequestId === record.sessionId) metadata.gate_parent = 'session'
    // a child follows from the call that caused it (or, with none in flight, the session's heads)
    const lineage = record.chain?.follow(record.parentReceiptId === undefined ? [] : [record.parentReceiptId])
    const body = {
      session_id: record.sessionId,
      parent_request_id: record.parentRequestId,
      request_id: uuidv7(),
      operation_kind: record.method,
      terminal_state: record.terminalState,
      outcome_hash: hashValue(record.outcome),
      policy_hash: this.#kernel.policyHash,
      metadata,
      ...lineage?.fields,
    }
    const id = sha256Hex(canonicalJson(body))
    const input: ListedReceiptInput = {
      kind: 'child',
      receiptId: id,
      json: canonicalJson({ ...body, id }),
      sessionId: body.session_id,
      parentRequestId: body.parent_request_id,
      requestId: body.request_id,
    }
    await joinChain(lineage, () => this.#children!.append(input), () => id)
    return { id }
  }
}

/**
 * Writes a receipt that joins a chain: committed, it becomes one of the chain's heads; not written, the
 * heads it named stay heads.
 */
async function joinChain<T>(lineage: PendingLineage | undefined, write: () => Promise<T>, idOf: (written: T) => string = w => (w as { receipt: { id: string } }).receipt.id): Promise<T> {
  let written: T
  try {
    written = await write()
  } catch (err) {
    lineage?.abandon()
    throw err
  }
  lineage?.commit(idOf(written))
  return written
}

/** Where child receipts go: the receipt store's listed receipts (`GET /v1/receipts/children`). */
export interface ChildReceiptSink {
  append(input: ListedReceiptInput): Promise<unknown>
}

// RFC 8785 where the value has a canonical form; an answer with a lone surrogate has none (I-JSON), and
// is hashed as its JSON text instead
function hashValue(value: unknown): string {
  try {
    return sha256Hex(canonicalJson(value ?? null))
  } catch {
    return sha256Hex(JSON.stringify(value ?? null))
  }
}

// Gate decides and then dispatches the call itself, and the tool server reports the result.
const RECEIPT_CONSTANTS = {
  receipt_kind: 'mediated_decision',
  boundary_class: 'prevent',
  tool_origin: 'host_executed_provider_reported',
  redaction_mode: 'none',
  trust_level: 'mediated',
  bbs_projection_version: null,
} as const

/** What the guards decide about a tool call. */
function toolSubject(input: ToolCallInput, cost: ToolCall['cost']): DecisionSubject {
  const { policy } = input
  const route = `${input.serverId}:${input.tool}`
  return {
    label: `tool ${route}`,
    requiredScope: route,
    policy: policy.decision,
    sessionAllowReason: policy.why,
    approvalRequired: policy.approvalRequired,
    budgetLimit: policy.budgetLimit,
    bindings: { method: TOOL_CALL_BINDING_METHOD, routePattern: route },
    strictNonce: false,
    toolCall: () => {
      const call: ToolCall = { server_id: input.serverId, tool_name: input.tool, arguments: input.params, session_id: input.sessionId ?? null }
      if (policy.aliases !== undefined && policy.aliases.length > 0) call.aliases = policy.aliases
      if (cost !== undefined) call.cost = cost
      return call
    },
    requestedCapabilityId: undefined,
    unenforcedAuthorization: input.unenforced?.[0],
    inputProblem: input.inputProblem,
    capabilityHint: TOOL_CAPABILITY_HINT,
  }
}

/** How an agent presents a token to `gate mcp serve` (docs/mcp.md). */
export const TOOL_CAPABILITY_HINT =
  'present a capability token granting this tool: per call in _meta.gateCapability, or for the session with gate mcp serve --capability-file (or GATE_CAPABILITY)'

/** The content a tool call's receipt binds: tool server, tool and the hash of the canonical parameters. */
export function toolCallContentHash(serverId: string, tool: string, parameterHash: string): string {
  return sha256Hex(canonicalJson({ parameter_hash: parameterHash, tool_name: tool, tool_server: serverId }))
}
