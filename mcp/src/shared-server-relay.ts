// A wrapped MCP server shared by every session of the hosted edge (`gate mcp serve-http
// --shared-server`, docs/mcp.md): one child process instead of one per session, for a stateless server
// where a process per session costs too much. No single session's client capabilities can be declared
// to it, so Gate declares none, and a request it sends anyway is answered -32601, as a client lacking
// the capability would (ping is answered). A list change concerns every session and goes to each ready
// one. Anything else it sends on its own (a log line, a resource update) goes to the session whose
// tools/calls are in flight on it when the message is read; with none, or calls of several sessions,
// it is dropped with a log line: never fanned out unattributed (spec 03, Events).
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { ErrorCode, McpError, type Notification } from '@modelcontextprotocol/sdk/types.js'
import type { StdioToolServer } from './stdio-tool-server.js'

/** Routes what the shared server sends on its own; `readySessions` are the sessions a list change goes to. */
export function relaySharedServer(wrapped: StdioToolServer, readySessions: () => Server[], log: (line: string) => void): void {
  wrapped.client.fallbackRequestHandler = async request => {
    if (request.method === 'ping') return {}
    throw new McpError(ErrorCode.MethodNotFound, `${request.method} is not relayed: Gate declares no client capabilities to a server shared by every session (--shared-server)`)
  }
  wrapped.onNotification = async (notification: Notification) => {
    if (notification.method.endsWith('/list_changed')) {
      for (const server of readySessions()) await server.notification({ method: notification.method }).catch(() => {})
      return
    }
    const calls = wrapped.callsAt(notification)
    const sessions = new Set(calls.map(call => call.sessionId))
    if (sessions.size !== 1) {
      log(`tool server: dropped ${notification.method} (${calls.length === 0 ? 'no tool call in flight' : 'tool calls of several sessions in flight'}: it cannot be attributed to one session)`)
      return
    }
    const call = calls[0]!
    const relayed = call.sendNotification({ method: notification.method, ...(notification.params === undefined ? {} : { params: notification.params }) }).catch(err => log(`relay: dropped ${notification.method}: ${(err as Error).message}`))
    call.pending.push(relayed)
    await relayed
  }
}
