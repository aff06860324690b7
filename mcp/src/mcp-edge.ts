// The MCP edge: an MCP server (the SDK's Server) that lists the tool server's tools and decides every
// tools/call through the kernel's tool-call path before the tool server sees it. tools/list shows
// every tool, each with Gate's policy in its `_meta.gate`; tools/call decides on its own, so a tool
// left out of a list and called by name is decided (and denied with a receipt) exactly like any other
// (docs/mcp.md). A denial is an `isError` result naming the reason code and the receipt id, which the
// model reads; an allowed call returns the tool server's result with the receipt id in `_meta.gate`.
// Every receipt of the session joins its lineage (`chain`), and every decision reads the session's
// SessionContext (spec 02).
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Tracer } from '@opentelemetry/api'
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ResultSchema,
  type CallToolResult,
  type ServerCapabilities,
  type Notification,
  type Request,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { ANONYMOUS_CALLER, type CallerIdentity, type ReceiptChain } from '@gate/sdk'
import { readCallMeta } from './call-meta.js'
import type { ToolCallContext } from './calls-in-flight.js'
import { EdgeSessionContext } from './edge-session-context.js'
import { isToolServerError } from './errors.js'
import { InputCheck } from './input-check.js'
import type { ToolCallDecider, ToolCallVerdict, ToolPolicy } from './ports.js'
import type { ServedTool, ToolServer } from './tool-server.js'
import { traceToolCall, type ToolCallTracing } from './tool-call-tracing.js'

// the extra of the edge Server's handlers (it sends the base Request and Notification types too)
type CallExtra = RequestHandlerExtra<ServerRequest | Request, ServerNotification | Notification>

export interface McpEdgeOptions {
  /** The `server_id` grants name for this tool server. */
  serverId: string
  toolServer: ToolServer
  decider: ToolCallDecider
  /** The session's capability token text (--capability-file / GATE_CAPABILITY); a per-call one wins. */
  sessionCapability?: string
  /** Operator policy: tools that run without a token (--allow-tool). */
  allowTools?: readonly string[]
  /** Operator policy: tools whose every call waits for an approver (--approval-tool). */
  approvalTools?: readonly string[]
  /** Where an approver answers (the control URL of `gate mcp serve`), for the pending-approval text. */
  controlUrl?: string
  /** Identifies this session in receipts (`gate_session_id`). */
  sessionId: string
  serverInfo: { name: string; version: string }
  /** Capabilities relayed from a wrapped server (resources, prompts, logging, completions). */
  relayedCapabilities?: ServerCapabilities
  instructions?: string
  caller?: CallerIdentity
  /** One input check shared by many edges (the hosted edge builds one edge per session). */
  inputCheck?: InputCheck
  /** A capability the HTTP request of the call carries (X-Gate-Capability): wins over the session's, loses to _meta's. */
  requestCapability?: (headers: Record<string, string | string[] | undefined>) => string | undefined
  /** The session's receipt lineage, shared with the relay of a wrapped server; default a new one from the decider. */
  chain?: ReceiptChain
  /** Set when tracing is on: each tools/call is a span (tool-call-tracing.ts). */
  tracer?: Tracer
}

/** Builds the edge Server; connect it to a transport (stdio-transport.ts) to serve. */
export function createMcpEdge(options: McpEdgeOptions): Server {
  const { relayedCapabilities = {} } = options
  const capabilities: ServerCapabilities = { ...relayedCapabilities, tools: { listChanged: relayedCapabilities.tools?.listChanged === true } }
  const server = new Server(options.serverInfo, { capabilities, ...(options.instructions === undefined ? {} : { instructions: options.instructions }) })
  const inputs = options.inputCheck ?? new InputCheck()
  const chain = options.chain ?? options.decider.openChain?.()
  const caller = options.caller ?? ANONYMOUS_CALLER
  const session = new EdgeSessionContext(options.sessionId, caller)
  const allow = new Set(options.allowTools ?? [])
  const approve = new Set(options.approvalTools ?? [])
  const policyOf = (tool: ServedTool): ToolPolicy => {
    const name = tool.definition.name
    const base = allow.has(name) ? { ...tool.policy, decision: 'SessionAllow' as const, why: `--allow-tool ${name}` } : tool.policy
    return approve.has(name) ? { ...base, approvalRequired: true } : base
  }

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const tools = await options.toolServer.listTools()
    return { tools: tools.map(t => listed(t.definition, policyOf(t))) }
  })

  const tracer = options.tracer
  const callTool = async (request: CallToolRequest, extra: CallExtra, tracing: ToolCallTracing | undefined): Promise<CallToolResult> => {
    const { name } = request.params
    const args = (request.params.arguments ?? {}) as Record<string, unknown>
    const meta = readCallMeta(request.params._meta)
    const tools = await options.toolServer.listTools().catch(() => [] as readonly ServedTool[])
    const tool = tools.find(t => t.definition.name === name)
    const decision = await options.decider.decide({
      serverId: options.serverId,
      tool: name,
      params: args,
      capabilityToken: meta.capabilityToken ?? requestCapability(options, extra.requestInfo?.headers) ?? options.sessionCapability,
      governedIntent: meta.governedIntent,
      approvalId: meta.approvalId,
      unenforced: meta.unenforced,
      modelMetadata: meta.modelMetadata,
      sessionId: options.sessionId,
      caller,
      // an unknown tool gets the wrapped default: it needs a grant, so a caller without one learns nothing
      policy: tool === undefined ? { decision: 'DenyByDefault', why: 'unknown tool', approvalRequired: false } : policyOf(tool),
      inputProblem: inputs.check(options.serverId, name, tool?.definition, args),
      chain,
      session: session.beginCall(args),
    })
    const answered = (result: CallToolResult): CallToolResult => {
      session.wrote(result)
      return result
    }
    if (decision.verdict.verdict !== 'allow') return answered(denial(decision, options.controlUrl))
    const progressToken = meta.progressToken
    // progress is relayed in order and before the result: the agent drops progress for a finished call
    let relayed = Promise.resolve()
    const onProgress = (p: { progress: number; total?: number; message?: string }) => {
      relayed = relayed.then(() => extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: progressToken! } })).catch(() => {})
    }
    // what a wrapped server sends during the call goes to this agent in relation to the call (passthrough.ts)
    const context: ToolCallContext = {
      requestId: decision.requestId,
      receiptId: decision.receipt.id,
      toolName: name,
      sessionId: options.sessionId,
      chain,
      sendRequest: (r, requestOptions) => extra.sendRequest(r, ResultSchema, requestOptions),
      sendNotification: n => extra.sendNotification(n as never),
      pending: [],
    }
    const hop = tracing?.startHop(options.toolServer.kind)
    try {
      const result = await options.toolServer.callTool(name, args, { signal: extra.signal, onProgress: progressToken === undefined ? undefined : onProgress, context, trace: hop?.carrier })
      hop?.end(result)
      await relayed
      if (context.pending.length > 0) await Promise.all(context.pending)
      return answered({ ...result, _meta: { ...result._meta, gate: { verdict: 'allow', receipt_id: decision.receipt.id } } })
    } catch (err) {
      hop?.end(undefined, err)
      return answered(await failed(options.decider, decision, err))
    }
  }
  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> => {
    if (tracer === undefined) return callTool(request, extra, undefined)
    const call = { tool: request.params.name, sessionId: options.sessionId, requestId: extra.requestId, meta: request.params._meta, headers: extra.requestInfo?.headers }
    return traceToolCall(tracer, call, tracing => callTool(request, extra, tracing))
  })
  return server
}

function requestCapability(options: McpEdgeOptions, headers: Record<string, string | string[] | undefined> | undefined): string | undefined {
  return headers === undefined ? undefined : options.requestCapability?.(headers)
}

/** A tool as listed: the server's definition with Gate's policy beside it (annotations stay the server's claims). */
function listed(definition: Tool, policy: ToolPolicy): Tool {
  const gate = { policy: policy.decision, approval_required: policy.approvalRequired, why: policy.why }
  return { ...definition, _meta: { ...definition._meta, gate } }
}

function denial(decision: ToolCallVerdict, controlUrl: string | undefined): CallToolResult {
  const { verdict } = decision
  const details = verdict.verdict === 'deny' ? (verdict.details ?? {}) : {}
  const reasonCode = typeof details.reason_code === 'string' ? details.reason_code : verdict.verdict
  const reason = 'reason' in verdict && typeof verdict.reason === 'string' ? verdict.reason : verdict.verdict
  const lines = [`Gate denied this call: ${reasonCode}: ${reason}`, `receipt: ${decision.receipt.id}`]
  if (typeof details.hint === 'string') lines.push(`hint: ${details.hint}`)
  const gate: Record<string, unknown> = { verdict: verdict.verdict, reason_code: reasonCode, receipt_id: decision.receipt.id }
  for (const key of ['required_scope', 'hint'] as const) if (details[key] !== undefined) gate[key] = details[key]
  if (decision.approval !== undefined) {
    const { approval_id: id, resume_path: path, expires_at: expiresAt } = decision.approval
    Object.assign(gate, { approval_id: id, resume_path: path, expires_at: expiresAt })
    lines.push(
      `approval ${id} is pending: an approver answers POST ${controlUrl ?? ''}${path}; once approved, repeat this exact call with _meta.gateApprovalId "${id}"`,
    )
  }
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], _meta: { gate } }
}

// An allowed call that did not complete gets its final receipt (cancelled or incomplete) before the
// answer; a JSON-RPC error the tool server itself answered is relayed with the receipt id in its data.
async function failed(decider: ToolCallDecider, decision: ToolCallVerdict, err: unknown): Promise<CallToolResult> {
  if (err instanceof McpError) {
    const final = await decider.finish(decision, { verdict: 'incomplete', reason: `the tool server answered JSON-RPC error ${err.code}: ${err.message}` })
    const data = typeof err.data === 'object' && err.data !== null ? err.data : err.data === undefined ? {} : { data: err.data }
    throw new McpError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), { ...data, gate: { verdict: 'incomplete', receipt_id: final.receipt.id } })
  }
  const cancelled = isToolServerError(err) && err.kind === 'cancelled'
  const reason = err instanceof Error ? err.message : String(err)
  const final = await decider.finish(decision, { verdict: cancelled ? 'cancelled' : 'incomplete', reason })
  const gate = { verdict: cancelled ? 'cancelled' : 'incomplete', reason, receipt_id: final.receipt.id, decision_receipt_id: decision.receipt.id }
  return { isError: true, content: [{ type: 'text', text: `Gate allowed this call but it did not complete: ${reason}\nreceipt: ${final.receipt.id}` }], _meta: { gate } }
}
