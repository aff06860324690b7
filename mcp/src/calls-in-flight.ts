// The tools/calls in flight on one connection to a wrapped MCP server, so that what the server sends
// during a call (a sampling, elicitation or roots request, a log line, a resource update) is attributed
// to the call that caused it (docs/mcp.md, "The session relayed whole"). Over stdio nothing in such a
// message names the call: with one call in flight on the connection it is that call's; with several the
// message still belongs to the connection's one session, and the record names every candidate.
import type { ReceiptChain } from '@gate/sdk'
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Notification, Request, Result } from '@modelcontextprotocol/sdk/types.js'

/** A tools/call Gate allowed and sent to the tool server, with how to reach its agent in relation to it. */
export interface ToolCallContext {
  /** The call's request id (`metadata.gate_request_id` of its decision receipt). */
  requestId: string
  /** The decision receipt's id. */
  receiptId: string
  toolName: string
  /** The session that made the call (`gate_session_id`). */
  sessionId: string
  /** The session's receipt lineage: a child receipt of the call joins it. */
  chain?: ReceiptChain
  /** Sends a request to the agent related to the call (on Streamable HTTP: on the call's own stream). */
  sendRequest(request: Request, options: RequestOptions): Promise<Result>
  /** Sends a notification to the agent related to the call. */
  sendNotification(notification: Notification): Promise<void>
  /** Relays under way for the call: the edge answers the call after them, while its stream is open. */
  pending: Promise<unknown>[]
}

export class CallsInFlight {
  readonly #calls = new Set<ToolCallContext>()

  /** Registers `call` until the returned function is called. */
  begin(call: ToolCallContext): () => void {
    this.#calls.add(call)
    return () => void this.#calls.delete(call)
  }

  /** The calls in flight now, oldest first. */
  snapshot(): readonly ToolCallContext[] {
    return this.#calls.size === 0 ? EMPTY : [...this.#calls]
  }
}

const EMPTY: readonly ToolCallContext[] = Object.freeze([])
