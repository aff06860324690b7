// One interface for the two kinds of tool server behind the MCP edge: a wrapped MCP server (a child
// process over stdio) and an OpenAPI API (HTTP requests with undici).
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ToolCallContext } from './calls-in-flight.js'
import type { ToolPolicy } from './ports.js'

/** A tool as the edge lists it, with the policy its server gives it (before operator overrides). */
export interface ServedTool {
  definition: Tool
  policy: ToolPolicy
}

/** Per-call options of a tool server call. */
export interface ToolCallOptions {
  /** Aborted when the agent cancels the call. */
  signal?: AbortSignal
  /** Progress the tool server reports, relayed to the agent. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void
  /**
   * Parts of a streamed answer as they arrive (an OpenAPI API's NDJSON lines, parsed). Only an edge
   * that can stream passes it (the native wire); the call then resolves with a streamed result
   * (`isStreamedResult`) whose parts were all delivered here. Without it the answer is read whole.
   */
  onChunk?: (data: unknown) => void
  /** The call as the relay sees it: what a wrapped server sends during the call is attributed to it. */
  context?: ToolCallContext
  /**
   * W3C trace context of the hop to the tool server (`traceparent`, `tracestate`), set only when
   * tracing is on: a wrapped MCP server gets it in the request's `_meta`, an OpenAPI API as headers.
   */
  trace?: Readonly<Record<string, string>>
}

/** Marks a result whose content went out through `onChunk` (a symbol: no tool server can send it). */
const STREAMED = Symbol.for('gate.tool-result.streamed')

/** The result of a call whose answer was delivered in `onChunk` parts. */
export function streamedResult(parts: number): CallToolResult {
  return Object.assign({ content: [], structuredContent: { parts } }, { [STREAMED]: true }) as CallToolResult
}

/** Whether a result's content went out through `onChunk`. */
export function isStreamedResult(result: CallToolResult): boolean {
  return (result as { [STREAMED]?: unknown })[STREAMED] === true
}

export interface ToolServer {
  /** What kind of server this is, for logs and the docs' policy rules. */
  readonly kind: 'mcp' | 'openapi'
  /** The tools, cached; a wrapped server's list_changed notification refreshes them. */
  listTools(): Promise<readonly ServedTool[]>
  /**
   * Calls one tool. Resolves with the tool's result (an `isError` result is a completed call);
   * rejects with a ToolServerError when the call did not complete.
   */
  callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<CallToolResult>
  close(): Promise<void>
}
