// The MCP edge's spans when tracing is on (docs/observability.md, "Traces"): a SERVER span per
// tools/call continuing the agent's trace (its `_meta.traceparent`, the MCP community's convention,
// else the HTTP request's `traceparent`), and a CLIENT span for the hop to the tool server whose
// context goes on in `_meta` (a wrapped MCP server) or headers (an OpenAPI API). Attribute names
// follow OpenTelemetry's MCP and JSON-RPC conventions. Never called with tracing off.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { markSpanError } from '@gate/sdk/server'

/** The hop to the tool server: the carrier to send, and the end of its span. */
export interface ToolHop {
  readonly carrier: Readonly<Record<string, string>>
  end(result: CallToolResult | undefined, err?: unknown): void
}

/** What the edge's handler gets while traced. */
export interface ToolCallTracing {
  /** Starts the CLIENT span of the call to the tool server, under the tools/call span. */
  startHop(serverKind: 'mcp' | 'openapi'): ToolHop
}

interface CallInfo {
  tool: string
  sessionId: string
  requestId: string | number
  meta: unknown
  headers: Record<string, string | string[] | undefined> | undefined
}

/** The agent's trace: `_meta` first, then the HTTP request's headers; none gives a new trace. */
function parentOf(meta: unknown, headers: CallInfo['headers']): Context {
  if (typeof meta === 'object' && meta !== null && typeof (meta as { traceparent?: unknown }).traceparent === 'string') {
    const m = meta as { traceparent: string; tracestate?: unknown }
    return propagation.extract(ROOT_CONTEXT, { traceparent: m.traceparent, ...(typeof m.tracestate === 'string' ? { tracestate: m.tracestate } : {}) })
  }
  if (headers !== undefined && typeof headers.traceparent === 'string') return propagation.extract(ROOT_CONTEXT, headers)
  return ROOT_CONTEXT
}

/** Runs one tools/call inside its SERVER span; the result's `_meta.gate` names the verdict and receipt. */
export function traceToolCall(tracer: Tracer, call: CallInfo, run: (tracing: ToolCallTracing) => Promise<CallToolResult>): Promise<CallToolResult> {
  const parent = parentOf(call.meta, call.headers)
  const span = tracer.startSpan(
    `tools/call ${call.tool}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.tool,
        'mcp.session.id': call.sessionId,
        'rpc.system': 'jsonrpc',
        'rpc.method': 'tools/call',
        'rpc.jsonrpc.version': '2.0',
        'rpc.jsonrpc.request_id': String(call.requestId),
      },
    },
    parent,
  )
  const active = trace.setSpan(parent, span)
  const tracing: ToolCallTracing = { startHop: serverKind => startHop(tracer, active, call.tool, serverKind) }
  return context.with(active, async () => {
    try {
      const result = await run(tracing)
      recordResult(span, result)
      return result
    } catch (err) {
      markSpanError(span, err)
      throw err
    } finally {
      span.end()
    }
  })
}

function startHop(tracer: Tracer, parent: Context, tool: string, serverKind: 'mcp' | 'openapi'): ToolHop {
  const span = tracer.startSpan(
    `tools/call ${tool}`,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': tool, 'gate.tool_server.kind': serverKind, 'rpc.system': serverKind === 'mcp' ? 'jsonrpc' : 'http' },
    },
    parent,
  )
  const carrier: Record<string, string> = {}
  propagation.inject(trace.setSpan(parent, span), carrier)
  return {
    carrier,
    end(result, err) {
      if (err !== undefined) markSpanError(span, err)
      else if (result?.isError === true) span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool answered isError' })
      span.end()
    },
  }
}

/** The verdict and receipt the edge put in the result's `_meta.gate`. */
function recordResult(span: Span, result: CallToolResult): void {
  const gate = (result._meta as { gate?: Record<string, unknown> } | undefined)?.gate
  if (gate !== undefined) {
    if (typeof gate.receipt_id === 'string') span.setAttribute('gate.receipt.id', gate.receipt_id)
    if (typeof gate.verdict === 'string') span.setAttribute('gate.verdict', gate.verdict)
    if (typeof gate.reason_code === 'string') span.setAttribute('gate.reason_code', gate.reason_code)
  }
  if (result.isError === true) {
    span.setAttribute('error.type', 'tool_error')
    span.setStatus({ code: SpanStatusCode.ERROR })
  }
}
