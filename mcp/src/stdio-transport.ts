// Serves the edge over stdio with the SDK's StdioServerTransport. The SDK drops a line that is not
// JSON or not a JSON-RPC message with only an onerror callback; the agent would wait forever for an
// answer, so the edge answers it with the JSON-RPC error the spec names (-32700 parse error, -32600
// invalid request; id null, as the id could not be read) and keeps serving.
//
// The edge Server is built when the agent's `initialize` arrives, not before: a wrapped server is
// started then and told exactly the client capabilities the agent declared (docs/mcp.md), and the edge
// answers `initialize` with that server's capabilities. Messages read before the Server exists wait.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, type InitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { dispatchByShape } from './shape-dispatch.js'

/** Builds the edge for the agent's initialize params (its capabilities and client info). */
export type EdgeBuilder = (initialize: InitializeRequest['params']) => Promise<Server>

/** Connects the edge `build` makes to this process's stdin/stdout; resolves when the agent's side closes. */
/** `failed()`: the edge could not be built for the agent's initialize (the agent was answered with why). */
export async function serveStdio(build: EdgeBuilder, log: (line: string) => void): Promise<{ closed: Promise<void>; server(): Server | undefined; failed(): boolean }> {
  const stdio = new StdioServerTransport()
  const transport = new DeferredTransport(stdio)
  let onClosed!: () => void
  const closed = new Promise<void>(resolve => (onClosed = resolve))
  let server: Server | undefined
  let failed = false
  stdio.onclose = () => onClosed()
  stdio.onerror = err => {
    const code = err.name === 'SyntaxError' ? ErrorCode.ParseError : err.name === 'ZodError' ? ErrorCode.InvalidRequest : undefined
    if (code === undefined) return log(`mcp: ${err.message}`)
    const answer = { jsonrpc: '2.0', id: null, error: { code, message: code === ErrorCode.ParseError ? 'Parse error' : 'Invalid Request' } }
    stdio.send(answer as unknown as JSONRPCMessage).catch(sendErr => log(`mcp: cannot answer a malformed message: ${(sendErr as Error).message}`))
  }
  transport.onfirst = async message => {
    const params = ((message as { params?: InitializeRequest['params'] }).params ?? { protocolVersion: '', capabilities: {}, clientInfo: { name: '', version: '' } }) as InitializeRequest['params']
    try {
      server = await build(params)
    } catch (err) {
      // the agent hears why, then Gate stops: there is nothing to serve
      failed = true
      log(`mcp: ${(err as Error).message}`)
      const id = 'id' in message ? message.id : null
      await stdio.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: (err as Error).message } } as unknown as JSONRPCMessage).catch(() => {})
      onClosed()
      return
    }
    server.onclose = () => onClosed()
    await server.connect(transport)
    dispatchByShape(server as never, transport)
  }
  await stdio.start()
  // stdin's end is the agent hanging up: the SDK's transport does not watch for it
  process.stdin.once('end', () => void (server === undefined ? onClosed() : server.close()))
  return { closed, server: () => server, failed: () => failed }
}

// A Transport over the started stdio transport that holds what is read until a Server connects: the
// first `initialize` (or any first request) starts building it.
class DeferredTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  onfirst?: (message: JSONRPCMessage) => Promise<void>
  readonly #inner: StdioServerTransport
  readonly #held: JSONRPCMessage[] = []
  #building = false

  constructor(inner: StdioServerTransport) {
    this.#inner = inner
    inner.onmessage = message => {
      if (this.onmessage !== undefined) return this.onmessage(message)
      this.#held.push(message)
      if (!this.#building && 'method' in message && 'id' in message) {
        this.#building = true
        void this.onfirst?.(message)
      }
    }
  }

  async start(): Promise<void> {
    // the inner transport is already reading; what it read waits here for the Server's handlers
    const inner = this.#inner
    const sdkOnClose = inner.onclose
    inner.onclose = () => {
      sdkOnClose?.()
      this.onclose?.()
    }
    const held = this.#held.splice(0)
    queueMicrotask(() => {
      for (const message of held) this.onmessage?.(message)
    })
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(message)
  }

  close(): Promise<void> {
    return this.#inner.close()
  }
}
