// Everything of a wrapped MCP server other than tools passes through Gate unchanged (docs/mcp.md):
// the agent's resources, prompts, completion and logging requests go to the child; the child's
// sampling, elicitation and roots requests go to the agent; notifications (logging, list changes,
// resource updates, progress) are relayed each way. Tools are what Gate decides, in mcp-edge.ts.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Protocol, RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { ErrorCode, McpError, ResultSchema, SetLevelRequestSchema, type Notification, type Request, type Result } from '@modelcontextprotocol/sdk/types.js'
import type { StdioToolServer } from './stdio-tool-server.js'

const AGENT_CAPABILITY: Record<string, 'sampling' | 'elicitation' | 'roots'> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
}

type AnyProtocol = Protocol<Request, Notification, Result>
interface RelayExtra {
  signal: AbortSignal
  sendNotification(notification: Notification): Promise<void>
}

/** Wires the edge and the wrapped server's client to relay every non-tool message, both ways (one agent). */
export function relayWrappedServer(edge: Server, wrapped: StdioToolServer, timeoutMs: number, log: (line: string) => void): void {
  relayAgentMessages(edge, wrapped, timeoutMs, log)
  const toAgent = edge as unknown as AnyProtocol
  wrapped.client.fallbackRequestHandler = (request, extra) => {
    // Gate announced sampling, elicitation and roots to the child before any agent connected: a request
    // the agent did not declare support for is answered here, as the agent's own SDK would
    const needed = AGENT_CAPABILITY[request.method]
    if (needed !== undefined && edge.getClientCapabilities()?.[needed] === undefined) {
      throw new McpError(ErrorCode.MethodNotFound, `the agent connected to Gate does not support ${request.method}`)
    }
    return relayRequest(toAgent, request, extra, timeoutMs)
  }
  wrapped.onNotification = notification => relayNotification(toAgent, notification, log)
}

/**
 * Relays the agent's non-tool requests and notifications to the wrapped server. The hosted edge wires
 * only this direction per session: the child is shared by every session, so what it sends on its own
 * cannot be attributed to one of them (docs/mcp.md).
 */
export function relayAgentMessages(edge: Server, wrapped: StdioToolServer, timeoutMs: number, log: (line: string) => void): void {
  const toChild = wrapped.client as unknown as AnyProtocol
  edge.fallbackRequestHandler = (request, extra) => relayRequest(toChild, request, extra, timeoutMs)
  // the edge answers logging/setLevel itself when it declares logging: the child must get it instead
  if (wrapped.client.getServerCapabilities()?.logging !== undefined) edge.setRequestHandler(SetLevelRequestSchema, (request, extra) => relayRequest(toChild, request, extra, timeoutMs))
  edge.fallbackNotificationHandler = notification => relayNotification(toChild, notification, log)
}

// A progress token travels as the relaying side's own request id (the SDK's onprogress), and each
// progress notification goes back under the token the sender chose.
async function relayRequest(target: AnyProtocol, request: Request, extra: RelayExtra, timeoutMs: number): Promise<Result> {
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
    const result = await target.request({ method: request.method, ...(params === undefined ? {} : { params }) }, ResultSchema, options)
    await relayed
    return result
  } catch (err) {
    // relay the other side's JSON-RPC error as it was answered, without the SDK's message prefix
    if (err instanceof McpError) throw new McpError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data)
    throw err
  }
}

async function relayNotification(target: AnyProtocol, notification: Notification, log: (line: string) => void): Promise<void> {
  try {
    await target.notification({ method: notification.method, ...(notification.params === undefined ? {} : { params: notification.params }) })
  } catch (err) {
    log(`relay: dropped ${notification.method}: ${(err as Error).message}`)
  }
}
