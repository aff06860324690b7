// The only place @gate/mcp's error classes live. Wire codes come from @gate/sdk's errors.ts: the MCP
// edge adds none. A tool server that fails after a call was allowed is reported to the agent as an
// `isError` result with the final receipt (docs/mcp.md); these classes are what that path and a
// library caller branch on (by `kind`).
import { GateError } from '@gate/sdk'

/** How a tool server failed: its child exited, it broke the protocol, it timed out, or an upstream failed. */
export type ToolServerFailureKind = 'exited' | 'protocol' | 'timeout' | 'upstream' | 'cancelled'

/** A tool server could not complete a call (or could not start). */
export class ToolServerError extends GateError {
  readonly kind: ToolServerFailureKind

  constructor(kind: ToolServerFailureKind, message: string, cause?: unknown) {
    super('gate_evaluation_failed', message, { cause, status: 502 })
    this.name = 'ToolServerError'
    this.kind = kind
  }
}

/** Bad configuration of the MCP edge or a tool server (an option, a spec, a command). */
export class McpConfigError extends GateError {
  constructor(message: string, cause?: unknown) {
    super('gate_invalid_config', message, { cause })
    this.name = 'McpConfigError'
  }
}

/** True for a ToolServerError, even one from another installed copy of this package. */
export function isToolServerError(value: unknown): value is ToolServerError {
  return value instanceof Error && value.name === 'ToolServerError' && typeof (value as { kind?: unknown }).kind === 'string'
}
