// Serves the edge over stdio with the SDK's StdioServerTransport. The SDK drops a line that is not
// JSON or not a JSON-RPC message with only an onerror callback; the agent would wait forever for an
// answer, so the edge answers it with the JSON-RPC error the spec names (-32700 parse error, -32600
// invalid request; id null, as the id could not be read) and keeps serving.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/** Connects `server` to this process's stdin/stdout; resolves when the agent's side closes. */
export async function serveStdio(server: Server, log: (line: string) => void): Promise<{ closed: Promise<void> }> {
  const transport = new StdioServerTransport()
  let onClosed!: () => void
  const closed = new Promise<void>(resolve => (onClosed = resolve))
  server.onclose = () => onClosed()
  await server.connect(transport)
  const sdkOnError = transport.onerror
  transport.onerror = err => {
    sdkOnError?.(err)
    const code = err.name === 'SyntaxError' ? ErrorCode.ParseError : err.name === 'ZodError' ? ErrorCode.InvalidRequest : undefined
    if (code === undefined) return log(`mcp: ${err.message}`)
    const answer = { jsonrpc: '2.0', id: null, error: { code, message: code === ErrorCode.ParseError ? 'Parse error' : 'Invalid Request' } }
    transport.send(answer as unknown as JSONRPCMessage).catch(sendErr => log(`mcp: cannot answer a malformed message: ${(sendErr as Error).message}`))
  }
  // stdin's end is the agent hanging up: the SDK's transport does not watch for it
  process.stdin.once('end', () => void server.close())
  return { closed }
}
