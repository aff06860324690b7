// A wrapped MCP server: Gate starts it as a child process and speaks MCP to it over stdio with the
// SDK's Client. Its tools all need a grant unless the operator's configuration says otherwise (the
// server's own annotations are claims, not policy). A child that exits is reported and stays gone: a
// restart would be a different server state the agent never agreed to (docs/mcp.md). Each message the
// child sends on its own is attributed, as it is read, to the tools/calls then in flight
// (calls-in-flight.ts), so the relay (passthrough.ts) can send it to the agent in relation to its call.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ProgressNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
  type JSONRPCMessage,
  type Notification,
} from '@modelcontextprotocol/sdk/types.js'
import { CallsInFlight, type ToolCallContext } from './calls-in-flight.js'
import { shapeDispatcher } from './shape-dispatch.js'
import { McpConfigError, ToolServerError } from './errors.js'
import type { ServedTool, ToolCallOptions, ToolServer } from './tool-server.js'
import type { ToolPolicy } from './ports.js'

export interface StdioToolServerOptions {
  command: string
  args: readonly string[]
  cwd?: string
  /** Wall-clock ceiling of one tool call. */
  timeoutMs: number
  /** Wall-clock ceiling of the start-up handshake. */
  startTimeoutMs: number
  /** Name and version Gate announces to the child. */
  clientInfo: { name: string; version: string }
  /**
   * The client capabilities Gate declares to the child: those of the agent it serves (sampling,
   * elicitation, roots), so a tool that needs what the agent lacks behaves as it would directly.
   * Default: none.
   */
  clientCapabilities?: ClientCapabilities
  log: (line: string) => void
}

/** Every tool of a wrapped server needs a grant unless --allow-tool names it. */
const WRAPPED_POLICY: ToolPolicy = Object.freeze({ decision: 'DenyByDefault', why: 'tool of a wrapped MCP server', approvalRequired: false })

export class StdioToolServer implements ToolServer {
  readonly kind = 'mcp' as const
  /** The connection to the child; the edge relays everything but tools through it (passthrough.ts). */
  readonly client: Client
  /** Notifications of the child other than progress and cancellation, for the edge to relay. */
  onNotification: ((notification: Notification) => Promise<void>) | undefined
  /** The tools/calls in flight on this connection. */
  readonly calls = new CallsInFlight()
  // the calls in flight when each request of the child was read (its attribution)
  readonly #attributions = new WeakMap<object, readonly ToolCallContext[]>()
  readonly #timeoutMs: number
  #tools: Promise<readonly ServedTool[]> | undefined
  #gone: string | undefined

  private constructor(client: Client, timeoutMs: number) {
    this.client = client
    this.#timeoutMs = timeoutMs
  }

  /** Starts the child and completes the MCP handshake with it. */
  static async start(options: StdioToolServerOptions): Promise<StdioToolServer> {
    const transport = new StdioClientTransport({
      command: options.command,
      args: [...options.args],
      cwd: options.cwd,
      env: childEnvironment(),
      stderr: 'inherit',
    })
    const client = new Client(options.clientInfo, { capabilities: options.clientCapabilities ?? {} })
    const server = new StdioToolServer(client, options.timeoutMs)
    client.onerror = err => options.log(`tool server: ${err.message}`)
    client.onclose = () => {
      server.#gone ??= 'the wrapped MCP server exited'
      options.log(`tool server: ${server.#gone}; calls of its tools now fail (it is not restarted)`)
    }
    try {
      await client.connect(transport, { timeout: options.startTimeoutMs })
      server.#tapMessages(transport, options.log)
      // the first list before the agent is served: a crash right after start still leaves it known
      if (client.getServerCapabilities()?.tools !== undefined) await server.listTools()
    } catch (err) {
      await client.close().catch(() => {})
      throw new McpConfigError(`cannot start the MCP server "${[options.command, ...options.args].join(' ')}": ${(err as Error).message}`, err)
    }
    if (client.getServerCapabilities()?.tools === undefined) options.log('tool server: the wrapped server declares no tools capability')
    return server
  }

  listTools(): Promise<readonly ServedTool[]> {
    // once the child is gone its last list stands, so a call of a known tool is still decided (and
    // its receipt says the call could not complete) rather than denied as unknown
    if (this.#gone !== undefined) return this.#tools ?? Promise.reject(new ToolServerError('exited', this.#gone))
    this.#tools ??= this.#fetchTools().catch(err => {
      this.#tools = undefined
      throw err
    })
    return this.#tools
  }

  async #fetchTools(): Promise<readonly ServedTool[]> {
    const out: ServedTool[] = []
    let cursor: string | undefined
    do {
      const page = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.#timeoutMs })
      for (const tool of page.tools) out.push({ definition: tool, policy: WRAPPED_POLICY })
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return out
  }

  /** The tools/calls that were in flight when the child's request `message` was read. */
  callsAt(message: object): readonly ToolCallContext[] {
    return this.#attributions.get(message) ?? []
  }

  async callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<CallToolResult> {
    if (this.#gone !== undefined) throw new ToolServerError('exited', this.#gone)
    const end = options.context === undefined ? undefined : this.calls.begin(options.context)
    try {
      // the MCP community's convention: trace context travels in the request's _meta
      const params = options.trace === undefined ? { name, arguments: args } : { name, arguments: args, _meta: { ...options.trace } }
      return await this.client.request({ method: 'tools/call', params }, CallToolResultSchema, {
        signal: options.signal,
        timeout: this.#timeoutMs,
        onprogress: options.onProgress,
      })
    } catch (err) {
      throw toToolServerFailure(err, options.signal, this.#gone)
    } finally {
      end?.()
    }
  }

  async close(): Promise<void> {
    this.#gone ??= 'the wrapped MCP server was stopped'
    await this.client.close()
  }

  // Messages of the child are handled as they are read, in order with the answers read with them: the
  // SDK dispatches a notification a microtask after reading it but resolves an answer at once, so a
  // progress or log line the child sends just before answering (one read from the pipe) would find its
  // call gone. Progress goes to the SDK's progress path; other notifications (but cancellation, which
  // the SDK handles) to the relay; a request is tagged with the calls in flight, then handed on.
  #tapMessages(transport: StdioClientTransport, log: (line: string) => void): void {
    const sdkOnMessage = shapeDispatcher(this.client as never, transport.onmessage)
    const client = this.client as unknown as { _onprogress(notification: unknown): void }
    const onProgress = client._onprogress.bind(this.client)
    transport.onmessage = (message: JSONRPCMessage) => {
      if ('method' in message) {
        if (!('id' in message)) {
          if (message.method === 'notifications/progress') {
            const parsed = ProgressNotificationSchema.safeParse(message)
            if (parsed.success) return onProgress(parsed.data)
          } else if (message.method !== 'notifications/cancelled') {
            if (message.method === 'notifications/tools/list_changed') this.#tools = undefined
            const relay = this.onNotification
            if (relay !== undefined) this.#attributions.set(message, this.calls.snapshot())
            relay?.(message as Notification).catch(err => log(`tool server: relaying ${message.method} failed: ${(err as Error).message}`))
            return
          }
        } else {
          this.#attributions.set(message, this.calls.snapshot())
        }
      }
      sdkOnMessage(message)
    }
  }
}

// A JSON-RPC error the child answered is the tool server's own answer and is relayed as is; a call
// that got no answer (timeout, exit, cancel) did not complete.
function toToolServerFailure(err: unknown, signal: AbortSignal | undefined, gone: string | undefined): unknown {
  if (signal?.aborted === true) return new ToolServerError('cancelled', 'the agent cancelled the call', err)
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return new ToolServerError('timeout', 'the wrapped MCP server did not answer in time', err)
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) return new ToolServerError('exited', gone ?? 'the wrapped MCP server exited', err)
  if (err instanceof McpError) return err
  return new ToolServerError('protocol', `the wrapped MCP server failed: ${(err as Error).message}`, err)
}

// The child gets Gate's environment except Gate's own variables: a session capability
// (GATE_CAPABILITY) or control token must never reach the server it guards.
function childEnvironment(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('GATE_')) env[key] = value
  }
  return env
}
