// The two message families of the native wire (spec 03, Native messages), as TypeScript types. Their
// schemas are gate.wire.agent_message.v1 and gate.wire.kernel_message.v1 (schemas/v1); every field
// name is the spec's. The nested signed objects (a capability token, a receipt) may be a RawJson,
// which the encoder writes byte for byte (raw-json.ts).
import type { CapabilityToken, CoreReceipt } from '../types.js'
import type { RawJson } from './raw-json.js'

/** An agent's tool call (spec 03: exactly these fields). */
export interface ToolCallRequestMessage {
  type: 'tool_call_request'
  /** The agent's id for the call, unique among its calls in flight on the connection. */
  id: string
  capability_token: CapabilityToken | Record<string, unknown> | RawJson
  server_id: string
  tool: string
  params: Record<string, unknown>
  governed_intent?: Record<string, unknown>
  approval_token?: Record<string, unknown>
  approval_tokens?: Record<string, unknown>[]
  threshold_approval_proposal?: Record<string, unknown>
  supplemental_authorization?: Record<string, unknown>
  execution_nonce?: Record<string, unknown>
}

export type AgentMessage = ToolCallRequestMessage | { type: 'list_capabilities' } | { type: 'heartbeat' }

/** ToolCallError, tagged on `code`. */
export type ToolCallError =
  | { code: 'capability_denied'; detail: string }
  | { code: 'capability_expired' }
  | { code: 'capability_revoked' }
  | { code: 'policy_denied'; detail: { guard: string; reason: string } }
  | { code: 'tool_server_error'; detail: string }
  | { code: 'internal_error'; detail: string }

/** ToolCallResult, tagged on `status`. */
export type ToolCallResult =
  | { status: 'ok'; value: unknown }
  | { status: 'stream_complete'; total_chunks: number }
  | { status: 'cancelled'; reason: string; chunks_received: number }
  | { status: 'incomplete'; reason: string; chunks_received: number }
  | { status: 'err'; error: ToolCallError }

export interface ToolCallChunkMessage {
  type: 'tool_call_chunk'
  id: string
  /** Zero-based, consecutive per call. */
  chunk_index: number
  data: unknown
}

export interface ToolCallResponseMessage {
  type: 'tool_call_response'
  id: string
  result: ToolCallResult
  receipt: CoreReceipt | RawJson
  execution_nonce?: Record<string, unknown>
}

export type KernelMessage =
  | ToolCallChunkMessage
  | ToolCallResponseMessage
  | { type: 'capability_list'; capabilities: (CapabilityToken | Record<string, unknown> | RawJson)[] }
  | { type: 'capability_revoked'; id: string }
  | { type: 'heartbeat' }

/** The six ToolCallError codes. */
export const TOOL_CALL_ERROR_CODES = Object.freeze(['capability_denied', 'capability_expired', 'capability_revoked', 'policy_denied', 'tool_server_error', 'internal_error'] as const)
