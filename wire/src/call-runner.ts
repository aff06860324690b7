// One tool call on the wire, from decision to answer (docs/wire.md, "A call"):
//   1. the kernel decides and commits the decision receipt (the same path as an MCP tools/call);
//      a denial is answered `err` with that receipt;
//   2. an allowed call goes to its tool server; what the server streams meanwhile becomes
//      tool_call_chunk frames, in order, from chunk_index 0: a wrapped MCP server's progress
//      notifications for the call, an OpenAPI API's NDJSON answer lines;
//   3. the end: `ok` with the tool's result (the decision receipt), `stream_complete` when the answer
//      itself was the chunks, or, for a call that did not complete, a final receipt committed first
//      and then `cancelled` (the connection closed, Gate stopped), `incomplete` (the tool server died,
//      timed out, cut its stream, or the result would not fit a frame) or `err tool_server_error` (the
//      wrapped server answered a JSON-RPC error).
// Receipts are durable before each answer: decide and finish resolve after their commit.
import { canonicalJson } from '@gate/sdk'
import type { ToolCallRequestMessage, ToolCallResult } from '@gate/sdk/wire'
import { isStreamedResult, isToolServerError, type ToolServer } from '@gate/mcp'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { toToolCallError } from './call-errors.js'
import type { ToolCallRequest, WireDecider, WireDecision } from './ports.js'

/** `closed`: the transport is gone; `refused`: the frame could not be written (past 16 MiB, not encodable). */
export type SendOutcome = 'sent' | 'closed' | { refused: string }

/** Where a call's frames go. */
export interface CallSink {
  chunk(index: number, data: unknown): SendOutcome
  respond(result: ToolCallResult, receiptJson: string): SendOutcome
}

export interface CallRun {
  message: ToolCallRequestMessage
  input: ToolCallRequest
  server: ToolServer | undefined
  decider: WireDecider
  /** Aborted to cancel the call; its reason (a string) is the cancellation's. */
  signal: AbortSignal
  sink: CallSink
  controlUrl: string | undefined
  /** Told once the decision is committed (the connection records the capability it presented). */
  onDecided(decision: WireDecision): void
}

const receiptText = (r: { receipt: unknown; json?: string; receiptJson?: string }) => r.receiptJson ?? r.json ?? canonicalJson(r.receipt)

/** Runs one call to its answer; rejects only when the kernel could not decide (no receipt exists). */
export async function runCall(run: CallRun): Promise<void> {
  const { decider, sink } = run
  const decision = await decider.decide(run.input)
  run.onDecided(decision)
  if (decision.verdict.verdict !== 'allow') {
    sink.respond({ status: 'err', error: toToolCallError(decision, run.controlUrl) }, receiptText(decision))
    return
  }
  let chunks = 0
  // a failure of Gate's own while the tool runs (a chunk past the frame limit) stops the call
  const local = new AbortController()
  let stopped: string | undefined
  const stop = (reason: string) => {
    stopped ??= reason
    local.abort(reason)
  }
  const push = (data: unknown) => {
    if (stopped !== undefined || run.signal.aborted) return
    const sent = run.sink.chunk(chunks, data)
    if (sent === 'sent') chunks++
    else if (sent !== 'closed') stop(`chunk ${chunks} could not be sent: ${sent.refused}`)
  }
  const end = async (verdict: 'cancelled' | 'incomplete', reason: string, result?: ToolCallResult) => {
    const final = await decider.finish(decision, { verdict, reason })
    sink.respond(result ?? { status: verdict, reason, chunks_received: chunks }, receiptText(final))
  }
  // the input check denies a call to no server; this is the last line, never reached from a decision
  if (run.server === undefined) return end('incomplete', `no tool server is named ${JSON.stringify(run.message.server_id)}`)
  if (run.signal.aborted) return end('cancelled', cancelReason(run.signal)!)
  let value
  try {
    value = await run.server.callTool(run.message.tool, run.message.params, {
      signal: AbortSignal.any([run.signal, local.signal]),
      onProgress: p => push(p),
      onChunk: data => push(data),
    })
  } catch (err) {
    if (stopped !== undefined) return end('incomplete', stopped)
    if (run.signal.aborted) return end('cancelled', cancelReason(run.signal)!)
    if (err instanceof McpError) {
      const detail = `the tool server answered JSON-RPC error ${err.code}: ${err.message.replace(/^MCP error -?\d+: /, '')}`
      return end('incomplete', detail, { status: 'err', error: { code: 'tool_server_error', detail } })
    }
    const cancelled = isToolServerError(err) && err.kind === 'cancelled'
    return end(cancelled ? 'cancelled' : 'incomplete', (err as Error).message)
  }
  if (stopped !== undefined) return end('incomplete', stopped)
  if (run.signal.aborted) return end('cancelled', cancelReason(run.signal)!)
  const result: ToolCallResult = isStreamedResult(value) ? { status: 'stream_complete', total_chunks: chunks } : { status: 'ok', value }
  const sent = sink.respond(result, receiptText(decision))
  if (typeof sent === 'object') await end('incomplete', `the result could not be sent: ${sent.refused}`)
}

function cancelReason(signal: AbortSignal): string | undefined {
  if (!signal.aborted) return undefined
  return typeof signal.reason === 'string' ? signal.reason : 'the call was cancelled'
}
