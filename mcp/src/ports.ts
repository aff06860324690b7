// What the MCP edge needs from the kernel, declared here so @gate/mcp never imports its caller: the
// sidecar's ToolCallKernel satisfies ToolCallDecider structurally and is wired in by `gate mcp serve`
// (ARCHITECTURE: sdk ← mcp ← sidecar).
import type { CallerIdentity, CoreReceipt, GuardEvidence, Verdict } from '@gate/sdk'

/** Which calls of a tool need a token, and what else its decision needs. */
export interface ToolPolicy {
  /** SessionAllow: no token needed (spec 01, e.g. a GET operation); DenyByDefault: a grant. */
  decision: 'SessionAllow' | 'DenyByDefault'
  /** Why, for the receipt's evidence (`safe method GET`, `--allow-tool read_file`, ...). */
  why: string
  /** Every call waits for an approver (x-gate-approval-required, x-gate-sensitivity: restricted, --approval-tool). */
  approvalRequired: boolean
  /** x-gate-budget-limit of the operation: a cap on the declared cost, minor units. */
  budgetLimit?: bigint
  /** Other names a grant may use for the tool (an OpenAPI operation's `{METHOD} {path}`). */
  aliases?: readonly string[]
}

/** One tool call to decide (spec 03 tool_call_request, as the MCP edge reads it). */
export interface ToolCallRequest {
  /** Minted when absent (UUIDv7). */
  requestId?: string
  serverId: string
  tool: string
  /** The call's arguments; recorded canonicalized in the receipt. */
  params: Record<string, unknown>
  /** Capability token text, JSON or base64url of it (per call, else the session's). */
  capabilityToken?: string
  /** spec 03 governed_intent; `max_amount` is the declared cost. */
  governedIntent?: Record<string, unknown>
  /** Gate approval id of an approved approval for exactly this call. */
  approvalId?: string
  /** Authorization members this path does not enforce, by name (a signed approval token, an execution nonce): denied, never ignored. */
  unenforced?: readonly string[]
  /** Model identity the agent asserts (spec 03: always asserted provenance). */
  modelMetadata?: Record<string, unknown>
  sessionId?: string | null
  caller: CallerIdentity
  policy: ToolPolicy
  /** Found by the edge before any decision: the tool is unknown, or its input_schema rejects the arguments. */
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
