// An OpenAPI API as a tool server: one tool per published operation (@gate/openapi's conversion), each
// call sent to the upstream as the HTTP request its definition describes, with undici. The operation's
// spec 01 policy is the tool's: a SessionAllow operation (a plain GET) runs without a token, a
// DenyByDefault one needs a grant. Requests go to the configured upstream origin only.
import { Agent, errors as undiciErrors, request } from 'undici'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ConvertedOperation, SpecConversion } from '@gate/openapi'
import { ToolServerError } from './errors.js'
import { buildOperationRequest } from './operation-request.js'
import { toToolResult } from './http-tool-result.js'
import { isNdjson, readNdjson } from './ndjson-stream.js'
import type { ToolPolicy } from './ports.js'
import { streamedResult, type ServedTool, type ToolCallOptions, type ToolServer } from './tool-server.js'

export interface OpenApiToolServerOptions {
  /** The converted document (convertSpec of the --spec bytes). */
  conversion: SpecConversion
  /** Upstream base URL; its path is kept as a prefix of every operation path. */
  upstream: URL
  /** Wall-clock ceiling of one call, reading the whole answer included. */
  timeoutMs: number
  /** Largest answer body read; a larger one fails the call. */
  maxResponseBytes: number
}

interface OperationTool extends ServedTool {
  operation: ConvertedOperation
}

export class OpenApiToolServer implements ToolServer {
  readonly kind = 'openapi' as const
  readonly #tools: readonly OperationTool[]
  readonly #byName: ReadonlyMap<string, OperationTool>
  readonly #options: OpenApiToolServerOptions
  readonly #agent: Agent

  constructor(options: OpenApiToolServerOptions) {
    this.#options = options
    this.#tools = options.conversion.operations.filter(op => op.published).map(op => ({ operation: op, definition: toMcpTool(op), policy: toolPolicy(op) }))
    this.#byName = new Map(this.#tools.map(t => [t.definition.name, t]))
    this.#agent = new Agent({ headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs })
  }

  listTools(): Promise<readonly ServedTool[]> {
    return Promise.resolve(this.#tools)
  }

  async callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<CallToolResult> {
    const tool = this.#byName.get(name)
    // the edge checks names before deciding; this is the last line, never reached from the edge
    if (tool === undefined) throw new ToolServerError('protocol', `no tool named ${JSON.stringify(name)}`)
    const req = buildOperationRequest(tool.operation.call, args, this.#options.upstream)
    const url = new URL(req.path, this.#options.upstream.origin)
    const timeout = AbortSignal.timeout(this.#options.timeoutMs)
    const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout])
    try {
      const headers = options.trace === undefined ? req.headers : { ...req.headers, ...options.trace }
      const res = await request(url, { method: req.method as 'GET', headers, body: req.body, signal, dispatcher: this.#agent })
      const header = res.headers['content-type']
      const contentType = Array.isArray(header) ? header[0] : header
      // a 2xx NDJSON answer streams to an edge that takes parts (ndjson-stream.ts); any other is read whole
      if (options.onChunk !== undefined && res.statusCode >= 200 && res.statusCode < 300 && isNdjson(contentType)) {
        return streamedResult(await readNdjson(res.body, this.#options.maxResponseBytes, options.onChunk))
      }
      const body = await readLimited(res.body, this.#options.maxResponseBytes)
      return toToolResult({ status: res.statusCode, contentType, body, url: url.href })
    } catch (err) {
      if (options.signal?.aborted === true) throw new ToolServerError('cancelled', 'the agent cancelled the call', err)
      if (timeout.aborted || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
        throw new ToolServerError('timeout', `the upstream did not answer ${req.method} ${url.pathname} within ${this.#options.timeoutMs} ms`, err)
      }
      if (err instanceof ToolServerError) throw err
      throw new ToolServerError('upstream', `the upstream request ${req.method} ${url.pathname} failed: ${(err as Error).message}`, err)
    }
  }

  close(): Promise<void> {
    return this.#agent.close()
  }
}

async function readLimited(body: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > maxBytes) throw new ToolServerError('upstream', `the upstream answer is larger than ${maxBytes} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** The operation's tool as MCP lists it (spec 01 ToolDefinition → MCP Tool). */
function toMcpTool(op: ConvertedOperation): Tool {
  const { tool } = op
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.input_schema as Tool['inputSchema'],
    annotations: {
      readOnlyHint: tool.annotations.read_only,
      destructiveHint: tool.annotations.destructive,
      idempotentHint: tool.annotations.idempotent,
      openWorldHint: true,
    },
  }
}

/** spec 01's route policy for the operation: the same rules `gate api protect` applies to the route. */
function toolPolicy(op: ConvertedOperation): ToolPolicy {
  const why = op.policy.why === 'side_effects' ? 'x-gate-side-effects: false' : op.policy.why === 'approval' ? 'x-gate-approval-required' : `safe method ${op.method}`
  return {
    decision: op.policy.decision,
    why,
    // spec 01: x-gate-sensitivity restricted always requires approval
    approvalRequired: op.extensions.approvalRequired || op.extensions.sensitivity === 'restricted',
    budgetLimit: op.extensions.budgetLimit,
    aliases: [`${op.method} ${op.path}`],
  }
}
