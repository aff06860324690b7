// Everything of a wrapped MCP server other than tools passes through Gate (docs/mcp.md, "The session
// relayed whole"): the agent's resources, prompts, completion and logging requests go to the server;
// the server's sampling, elicitation, roots and ping requests go to the agent, and the answers come
// back; notifications (logging, list changes, resource updates, progress, cancellation) are relayed each
// way. What the server sends during a tools/call is sent to the agent in relation to that call (on
// Streamable HTTP, on the call's own stream), and each request relayed to the agent is recorded as a
// child receipt linked to the call. Tools are what Gate decides, in mcp-edge.ts.
import type { ReceiptChain } from '@gate/sdk'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Protocol, RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { ErrorCode, McpError, ResultSchema, SetLevelRequestSchema, type ClientCapabilities, type Notification, type Request, type Result } from '@modelcontextprotocol/sdk/types.js'
import type { ToolCallContext } from './calls-in-flight.js'
import type { RelayedRequestRecord, ToolCallDecider } from './ports.js'
import type { StdioToolServer } from './stdio-tool-server.js'

const AGENT_CAPABILITY: Record<string, 'sampling' | 'elicitation' | 'roots'> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
}

/**
 * What Gate declares to a wrapped server for an agent: the agent's own sampling, elicitation and roots
 * capabilities, nothing more (Gate relays no tasks and no experimental features of the agent's).
 */
export function relayedClientCapabilities(agent: ClientCapabilities | undefined): ClientCapabilities {
  const declared: ClientCapabilities = {}
  for (const key of ['sampling', 'elicitation', 'roots'] as const) if (agent?.[key] !== undefined) Object.assign(declared, { [key]: agent[key] })
  return declared
}

type AnyProtocol = Protocol<Request, Notification, Result>
type Send = (request: Request, options: RequestOptions) => Promise<Result>
interface RelayExtra {
  signal: AbortSignal
  sendNotification(notification: Notification): Promise<void>
}

export interface RelayOptions {
  /** Ceiling of one relayed request. */
  timeoutMs: number
  log: (line: string) => void
  /** The tool server's id and the session's, for the child receipts. */
  serverId: string
  sessionId: string
  /** Records each request relayed to the agent; without it nothing is recorded (tests of the relay alone). */
  recorder?: Pick<ToolCallDecider, 'recordRelayed'>
  /** The session's receipt lineage (the edge's), for a request relayed while no call is in flight. */
  chain?: ReceiptChain
}

/**
 * Relays everything but tools between one agent session (`edge`) and its own connection to the wrapped
 * server, both ways. The connection serves this session only, so whatever the server sends is this
 * session's: it goes to no other.
 */
export function relayWrappedServer(edge: Server, wrapped: StdioToolServer, options: RelayOptions): void {
  relayAgentMessages(edge, wrapped, options.timeoutMs, options.log)
  const toAgent = edge as unknown as AnyProtocol
  const sendToAgent: Send = (request, requestOptions) => toAgent.request(request, ResultSchema, requestOptions)
  wrapped.client.fallbackRequestHandler = async (request, extra) => {
    const calls = wrapped.callsAt(request)
    const call = calls.length === 1 ? calls[0] : undefined
    const record = (terminalState: RelayedRequestRecord['terminalState'], outcome: unknown) => recordRelayed(options, calls, request, terminalState, outcome)
    // Gate declared to the server only what the agent declared; a server that asks anyway is answered
    // as the agent's own SDK would answer it
    const needed = AGENT_CAPABILITY[request.method]
    if (needed !== undefined && edge.getClientCapabilities()?.[needed] === undefined) {
      const refusal = new McpError(ErrorCode.MethodNotFound, `the agent connected to Gate does not support ${request.method}`)
      await record('refused', errorOutcome(refusal))
      throw refusal
    }
    let result: Result
    try {
      result = await relayRequest(call === undefined ? sendToAgent : (r, o) => call.sendRequest(r, o), request, extra, options.timeoutMs)
    } catch (err) {
      await record(extra.signal.aborted ? 'cancelled' : 'failed', errorOutcome(err))
      throw err
    }
    // recorded before the server sees the answer (commit before reply)
    await record('completed', result)
    return result
  }
  wrapped.onNotification = notification => {
    const calls = wrapped.callsAt(notification)
    if (calls.length !== 1) return relayNotification(toAgent, notification, options.log)
    const relayed = calls[0]!.sendNotification(copyNotification(notification)).catch(err => options.log(`relay: dropped ${notification.method}: ${(err as Error).message}`))
    calls[0]!.pending.push(relayed)
    return relayed
  }
}

/**
 * Relays the agent's non-tool requests and notifications to the wrapped server. With a server shared
 * by every session (`--shared-server`) this is the only direction wired per session: what the server
 * sends on its own is routed by the hosted edge (docs/mcp.md).
 */
export function relayAgentMessages(edge: Server, wrapped: StdioToolServer, timeoutMs: number, log: (line: string) => void): void {
  const toChild = wrapped.client as unknown as AnyProtocol
  const send: Send = (request, options) => toChild.request(request, ResultSchema, options)
  edge.fallbackRequestHandler = (request, extra) => relayRequest(send, request, extra, timeoutMs)
  // the edge answers logging/setLevel itself when it declares logging: the child must get it instead
  if (wrapped.client.getServerCapabilities()?.logging !== undefined) edge.setRequestHandler(SetLevelRequestSchema, (request, extra) => relayRequest(send, request, extra, timeoutMs))
  edge.fallbackNotificationHandler = notification => relayNotification(toChild, notification, log)
}

// A progress token travels as the relaying side's own request id (the SDK's onprogress), and each
// progress notification goes back under the token the sender chose.
async function relayRequest(send: Send, request: Request, extra: RelayExtra, timeoutMs: number): Promise<Result> {
  const params = request.params === undefined ? undefined : { ...request.params }
  const meta = params?._meta === undefined ? undefined : { ...params._meta }
  const progressToken = meta?.progressToken
  if (meta !== undefined && params !== undefined) {
    delete meta.progressToken
    params._meta = meta
  }
  const options: RequestOptions = { signal: extra.signal, timeout: timeoutMs }
  let relayed = Promise.resolve()
  if (progressToken !== undefined) {
    options.onprogress = p => {
      relayed = relayed.then(() => extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken } })).catch(() => {})
    }
    options.resetTimeoutOnProgress = true
  }
  try {
    const result = await send({ method: request.method, ...(params === undefined ? {} : { params }) }, options)
    await relayed
    return result
  } catch (err) {
    // relay the other side's JSON-RPC error as it was answered, without the SDK's message prefix
    if (err instanceof McpError) throw new McpError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data)
    throw err
  }
}

function copyNotification(notification: Notification): Notification {
  return { method: notification.method, ...(notification.params === undefined ? {} : { params: notification.params }) }
}

async function relayNotification(target: AnyProtocol, notification: Notification, log: (line: string) => void): Promise<void> {
  try {
    await target.notification(copyNotification(notification))
  } catch (err) {
    log(`relay: dropped ${notification.method}: ${(err as Error).message}`)
  }
}

function errorOutcome(err: unknown): { error: { code: number; message: string } } {
  if (err instanceof McpError) return { error: { code: err.code, message: err.message.replace(/^MCP error -?\d+: /, '') } }
  return { error: { code: ErrorCode.InternalError, message: err instanceof Error ? err.message : String(err) } }
}

// The child receipt of a relayed request. A record that cannot be stored fails the request: the
// server never acts on an answer Gate did not record.
async function recordRelayed(options: RelayOptions, calls: readonly ToolCallContext[], request: Request, terminalState: RelayedRequestRecord['terminalState'], outcome: unknown): Promise<void> {
  if (options.recorder?.recordRelayed === undefined) return
  const parent = calls[0]
  const record: RelayedRequestRecord = {
    sessionId: options.sessionId,
    parentRequestId: parent?.requestId ?? options.sessionId,
    serverId: options.serverId,
    method: request.method,
    params: request.params ?? {},
    terminalState,
    outcome,
  }
  const chain = parent?.chain ?? options.chain
  if (chain !== undefined) record.chain = chain
  if (parent !== undefined) {
    record.parentReceiptId = parent.receiptId
    record.toolName = parent.toolName
  }
  if (calls.length > 1) record.candidateParentRequestIds = calls.map(c => c.requestId)
  try {
    await options.recorder.recordRelayed(record)
  } catch (err) {
    options.log(`relay: cannot record ${request.method}: ${(err as Error).message}`)
    throw new McpError(ErrorCode.InternalError, `Gate could not record the relayed ${request.method}`)
  }
}
