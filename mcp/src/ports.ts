// What the MCP edge needs from the kernel, declared here so @gate/mcp never imports its caller: the
// sidecar's ToolCallKernel satisfies ToolCallDecider structurally and is wired in by `gate mcp serve`
// (ARCHITECTURE: sdk ← mcp ← sidecar).
import type { CallerIdentity, CoreReceipt, GuardEvidence, ReceiptChain, SessionContext, Verdict } from '@gate/sdk'

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
  /** The session's receipt lineage (`ToolCallDecider.openChain`): the receipt joins it. */
  chain?: ReceiptChain
  /** The session as the edge sees it (spec 02 SessionContext), this call counted; guards read it. */
  session?: SessionContext
}

/** A decided call: its verdict (deny details included), committed receipt, and a pending approval. */
export interface ToolCallVerdict {
  requestId: string
  verdict: Verdict
  evidence: GuardEvidence[]
  receipt: CoreReceipt
  approval?: { approval_id: string; resume_path: string; expires_at: number }
}

/**
 * A request a wrapped server sent its agent, relayed by Gate, and how it ended: recorded as a child
 * receipt (spec 03, "Child receipts") linked to the tools/call that caused it.
 */
export interface RelayedRequestRecord {
  /** The session's id (`gate_session_id` of its tool calls' receipts). */
  sessionId: string
  /** The request id of the tools/call in flight (its receipt's `gate_request_id`); the session's id when none was. */
  parentRequestId: string
  /** The decision receipt of that call. */
  parentReceiptId?: string
  /** Every call in flight when several were (the wire does not say which one the server meant). */
  candidateParentRequestIds?: readonly string[]
  serverId: string
  toolName?: string
  /** The JSON-RPC method (`sampling/createMessage`, `elicitation/create`, `roots/list`, …). */
  method: string
  params: unknown
  /** completed: the agent answered; failed: it answered an error; cancelled: the server withdrew it; refused: Gate answered for the agent. */
  terminalState: 'completed' | 'failed' | 'cancelled' | 'refused'
  /** The agent's result, or `{error: {code, message}}`. */
  outcome: unknown
  /** The session's receipt lineage: the child receipt joins it, following its call. */
  chain?: ReceiptChain
}

/** The kernel's tool-call path. */
export interface ToolCallDecider<D extends ToolCallVerdict = ToolCallVerdict> {
  /** Decides one call; resolves once its receipt is durably stored. */
  decide(input: ToolCallRequest): Promise<D>
  /** The final receipt of an allowed call that did not complete; resolves once it is stored. */
  finish(decision: D, ending: { verdict: 'cancelled' | 'incomplete'; reason: string }): Promise<{ receipt: CoreReceipt }>
  /** Records a relayed server-to-client request (a child receipt); resolves with its id once stored. */
  recordRelayed?(record: RelayedRequestRecord): Promise<{ id: string }>
  /** A new receipt lineage for one agent session (spec 03, Receipt DAG): another session, another chain. */
  openChain?(): ReceiptChain
}
