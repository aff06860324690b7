// What the MCP edge needs from the kernel, declared here so @gate/mcp never imports its caller: the
// sidecar's ToolCallKernel satisfies ToolCallDecider structurally and is wired in by `gate mcp serve`
// (ARCHITECTURE: sdk ← mcp ← sidecar).
import type { CallerIdentity, CoreReceipt, GuardEvidence, Verdict } from '@gate/sdk'

/** Which calls of a tool need a token, and what else its decision needs. */
export interface ToolPolicy {
  /** SessionAllow: no token needed; DenyByDefault: a grant. */
  decision: 'SessionAllow' | 'DenyByDefault'
  /** Why, for the receipt's evidence. */
  why: string
  /** Every call waits for an approver. */
  approvalRequired: boolean
  /** A cap on the declared cost, minor units. */
  budgetLimit?: bigint
  /** Other names a grant may use for the tool (an OpenAPI operation's `{METHOD} {path}`). */
  aliases?: readonly string[]
}

/** One tool call to decide (spec 03 tool_call_request). */
export interface ToolCallRequest {
  requestId?: string
  serverId: string
  tool: string
  params: Record<string, unknown>
  capabilityToken?: string
  governedIntent?: Record<string, unknown>
  approvalId?: string
  unenforced?: readonly string[]
  modelMetadata?: Record<string, unknown>
  sessionId?: string | null
  caller: CallerIdentity
  policy: ToolPolicy
  inputProblem?: { code: 'tool_unknown' | 'arguments_invalid'; reason: string }
}

/** A decided call: its verdict (deny details included), committed receipt, and a pending approval. */
export interface ToolCallVerdict {
  requestId: string
  verdict: Verdict
  evidence: GuardEvidence[]
  receipt: CoreReceipt
  approval?: { approval_id: string; resume_path: string; expires_at: number }
}

/** The kernel's tool-call path. */
export interface ToolCallDecider<D extends ToolCallVerdict = ToolCallVerdict> {
  /** Decides one call; resolves once its receipt is durably stored. */
  decide(input: ToolCallRequest): Promise<D>
  /** The final receipt of an allowed call that did not complete; resolves once it is stored. */
  finish(decision: D, ending: { verdict: 'cancelled' | 'incomplete'; reason: string }): Promise<{ receipt: CoreReceipt }>
}
