// One agent connection on the kernel side of the native wire. Calls run concurrently, each answered
// under its own id; list_capabilities and heartbeat are answered at once, in order. The connection
// remembers the capabilities it presented that the kernel found authentic (the receipt names their
// id), to list them and to push capability_revoked when one of them, or a capability it was delegated
// from, is revoked. When the transport closes, every call in flight is cancelled: its final receipt
// says so, and its `cancelled` answer goes out if the transport still can carry it (Gate stopping).
// The connection is one agent session: its receipts form one lineage (spec 03, Receipt DAG), and each
// decision reads its SessionContext (spec 02).
import { WireProtocolError, FrameConnection, parseAgentMessage, RawJson, type AgentMessage, type KernelMessage, type ToolCallRequestMessage, type ToolCallResult } from '@gate/sdk/wire'
import type { CallerIdentity, CapabilityToken, ReceiptChain } from '@gate/sdk'
import type { Duplex } from 'node:stream'
import { EdgeSessionContext, type InputCheck } from '@gate/mcp'
import { toDecisionInput } from './call-request.js'
import { runCall, type CallSink, type SendOutcome } from './call-runner.js'
import type { WireDecider, WireDecision } from './ports.js'
import type { ToolServerSet } from './tool-server-set.js'

/** What every session of an endpoint shares. */
export interface SessionContext {
  decider: WireDecider
  toolServers: ToolServerSet
  inputs: InputCheck
  controlUrl: string | undefined
  log: (line: string) => void
  /** Calls in flight on one connection before Gate stops reading it. */
  maxInFlight: number
  /** Bytes queued for an agent that does not read before its connection is closed. */
  maxQueuedBytes: number
}

interface HeldCapability {
  token: RawJson
  /** Its own id and the ids of the capabilities it was delegated from. */
  lineage: string[]
}

export class WireSession {
  readonly id: string
  readonly #ctx: SessionContext
  readonly #caller: CallerIdentity
  readonly #connection: FrameConnection<AgentMessage, KernelMessage>
  readonly #calls = new Map<string, { abort: AbortController; done: Promise<void> }>()
  readonly #held = new Map<string, HeldCapability>()
  readonly #chain: ReceiptChain | undefined
  readonly #session: EdgeSessionContext
  readonly closed: Promise<void>
  #markClosed!: () => void
  #cancelReason = 'the agent closed the connection'

  constructor(socket: Duplex, id: string, caller: CallerIdentity, ctx: SessionContext) {
    this.id = id
    this.#ctx = ctx
    this.#caller = caller
    this.#chain = ctx.decider.openChain?.()
    this.#session = new EdgeSessionContext(id, caller)
    this.closed = new Promise(resolve => (this.#markClosed = resolve))
    this.#connection = new FrameConnection<AgentMessage, KernelMessage>(socket, {
      parse: parseAgentMessage,
      onMessage: message => this.#receive(message),
      onClose: failure => void this.#onClose(failure),
    })
  }

  get inFlight(): number {
    return this.#calls.size
  }

  /** Pushes capability_revoked for each held capability `capabilityId` revokes (itself or an ancestor). */
  revoked(capabilityId: string): void {
    for (const [id, held] of this.#held) {
      if (!held.lineage.includes(capabilityId)) continue
      this.#held.delete(id)
      this.#send({ type: 'capability_revoked', id })
    }
  }

  /** Cancels every call in flight with `reason`, answers each, then ends the transport. */
  async close(reason: string): Promise<void> {
    this.#cancelReason = reason
    for (const call of this.#calls.values()) call.abort.abort(reason)
    await Promise.all([...this.#calls.values()].map(c => c.done))
    this.#connection.end()
    await this.closed
  }

  #receive(message: AgentMessage): void {
    switch (message.type) {
      case 'heartbeat':
        return void this.#send({ type: 'heartbeat' })
      case 'list_capabilities':
        return void this.#send({ type: 'capability_list', capabilities: [...this.#held.values()].map(h => h.token) })
      case 'tool_call_request':
        return this.#start(message)
    }
  }

  #start(message: ToolCallRequestMessage): void {
    if (this.#calls.has(message.id)) {
      // two answers under one id could not be told apart
      this.#connection.destroy(new WireProtocolError('deserialization_failed', `call id ${message.id} is already in flight on this connection`))
      return
    }
    const abort = new AbortController()
    const entry = { abort, done: Promise.resolve() }
    this.#calls.set(message.id, entry)
    if (this.#calls.size >= this.#ctx.maxInFlight) this.#connection.pause()
    entry.done = this.#run(message, abort.signal).finally(() => {
      this.#calls.delete(message.id)
      if (this.#calls.size < this.#ctx.maxInFlight) this.#connection.resume()
    })
  }

  async #run(message: ToolCallRequestMessage, signal: AbortSignal): Promise<void> {
    const { toolServers, decider, inputs } = this.#ctx
    const resolved = await toolServers.resolve(message.server_id, message.tool)
    const input = toDecisionInput(message, resolved, { sessionId: this.id, caller: this.#caller, inputs })
    input.chain = this.#chain
    input.session = this.#session.beginCall(message.params)
    try {
      await runCall({ message, input, server: resolved.server, decider, signal, sink: this.#sink(message.id), controlUrl: this.#ctx.controlUrl, onDecided: d => this.#hold(message, d) })
    } catch (err) {
      // no receipt could be written for this call: nothing may be answered without one (fail closed)
      this.#ctx.log(`wire: call ${message.id} on ${this.id} could not be decided: ${(err as Error).message}; closing the connection`)
      this.#connection.destroy(new WireProtocolError('connection_closed', 'the kernel could not record a decision'))
    }
  }

  #sink(id: string): CallSink {
    return {
      chunk: (index, data) => this.#send({ type: 'tool_call_chunk', id, chunk_index: index, data }),
      respond: (result: ToolCallResult, receiptJson: string) => {
        this.#session.wrote(result)
        return this.#send({ type: 'tool_call_response', id, result, receipt: new RawJson(receiptJson) })
      },
    }
  }

  #hold(message: ToolCallRequestMessage, decision: WireDecision): void {
    // only a token the kernel verified is filed under its id (a forged one stays a claim in metadata)
    const id = decision.receipt.capability_id
    if (typeof id !== 'string' || id === '' || this.#held.has(id)) return
    // a revoked token is authentic but no longer held
    if (decision.verdict.verdict === 'deny' && decision.verdict.details?.reason_code === 'capability_revoked') return
    const token = message.capability_token as RawJson
    const chain = ((token.value as CapabilityToken).delegation_chain ?? []).map(link => link.capability_id).filter((c): c is string => typeof c === 'string')
    this.#held.set(id, { token, lineage: [id, ...chain] })
  }

  #send(message: KernelMessage): SendOutcome {
    let sent: boolean
    try {
      sent = this.#connection.send(message)
    } catch (err) {
      // past the frame limit, or a value canonical JSON cannot carry (a lone surrogate): nothing was written
      return { refused: (err as Error).message }
    }
    if (!sent) return 'closed'
    if (this.#connection.writableLength > this.#ctx.maxQueuedBytes) {
      this.#connection.destroy(new WireProtocolError('connection_closed', `the agent read nothing while ${this.#connection.writableLength} bytes waited for it`))
      return 'closed'
    }
    return 'sent'
  }

  async #onClose(failure: WireProtocolError | undefined): Promise<void> {
    if (failure !== undefined) this.#ctx.log(`wire: ${this.id} closed: ${failure.message}`)
    const reason = failure === undefined ? this.#cancelReason : `the connection closed: ${failure.message}`
    if (this.#calls.size > 0) this.#ctx.log(`wire: ${this.id} closed with ${this.#calls.size} call(s) in flight; cancelling them: ${reason}`)
    for (const call of this.#calls.values()) call.abort.abort(reason)
    await Promise.all([...this.#calls.values()].map(c => c.done))
    this.#markClosed()
  }
}
