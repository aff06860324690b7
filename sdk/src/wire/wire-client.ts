// An agent's client of the native wire (docs/wire.md): connects to the socket `gate run` names in
// GATE_WIRE_SOCKET (or `gate wire serve`'s Unix socket, or its TCP port with mutual TLS), sends
// tool_call_request, list_capabilities and heartbeat, and sorts what the kernel sends back: chunks and
// responses by call id, capability lists and heartbeats in the order they were asked for, and
// capability_revoked as an event. A frame the kernel should not have sent (a chunk out of order, an
// answer to no call) closes the transport, as any deserialization failure does.
import { EventEmitter } from 'node:events'
import { connect as connectNet, type Socket } from 'node:net'
import { connect as connectTls, type ConnectionOptions } from 'node:tls'
import { randomUUID } from 'node:crypto'
import { WireProtocolError } from '../errors.js'
import type { CapabilityToken, CoreReceipt } from '../types.js'
import { FrameConnection } from './frame-connection.js'
import { WIRE_SOCKET_ENV } from './limits.js'
import { parseKernelMessage } from './message-parser.js'
import type { AgentMessage, KernelMessage, ToolCallRequestMessage } from './messages.js'
import { RawJson } from './raw-json.js'
import { WireCall, type WireCallOutcome } from './wire-call.js'

/** Where the kernel listens: a Unix socket path, or a TCP address with the TLS client options (mutual TLS). */
export type WireTarget = string | { path: string } | { host: string; port: number; tls: ConnectionOptions }

/** One tool call to make. */
export interface WireCallInput {
  serverId: string
  tool: string
  params?: Record<string, unknown>
  /** The capability: the line of JSON `gate capability issue` printed (sent byte for byte), or the object. */
  capabilityToken: string | CapabilityToken | Record<string, unknown> | RawJson
  /** The call's id; a fresh UUID when absent. */
  id?: string
  /** The optional members of spec 03's tool_call_request. */
  extra?: Partial<Omit<ToolCallRequestMessage, 'type' | 'id' | 'capability_token' | 'server_id' | 'tool' | 'params'>>
}

type Waiter<T> = { resolve(value: T): void; reject(err: WireProtocolError): void }

/** Events: `capability_revoked` (the id, pushed by the kernel), `close` (the failure, or undefined). */
export class WireClient extends EventEmitter<{ capability_revoked: [capabilityId: string]; close: [failure: WireProtocolError | undefined] }> {
  readonly #connection: FrameConnection<KernelMessage, AgentMessage>
  readonly #calls = new Map<string, WireCall>()
  readonly #lists: Waiter<Record<string, unknown>[]>[] = []
  readonly #heartbeats: Waiter<void>[] = []
  readonly #closed: Promise<WireProtocolError | undefined>
  #failure: WireProtocolError | undefined

  private constructor(socket: Socket) {
    super()
    let closed!: (failure: WireProtocolError | undefined) => void
    this.#closed = new Promise(resolve => (closed = resolve))
    this.#connection = new FrameConnection(socket, {
      parse: parseKernelMessage,
      onMessage: message => this.#receive(message),
      onClose: failure => {
        this.#failure = failure ?? new WireProtocolError('connection_closed', 'the kernel closed the connection')
        for (const call of this.#calls.values()) call.fail(this.#failure)
        this.#calls.clear()
        for (const w of [...this.#lists.splice(0), ...this.#heartbeats.splice(0)]) w.reject(this.#failure)
        closed(failure)
        this.emit('close', failure)
      },
    })
  }

  /** Connects to `target` (default: the GATE_WIRE_SOCKET path `gate run` gives its agent). */
  static connect(target: WireTarget | undefined = process.env[WIRE_SOCKET_ENV]): Promise<WireClient> {
    if (target === undefined || target === '') return Promise.reject(new WireProtocolError('connection_closed', `no wire socket: ${WIRE_SOCKET_ENV} is not set (run the agent under gate run)`))
    const path = typeof target === 'string' ? target : 'path' in target ? target.path : undefined
    return new Promise((resolve, reject) => {
      const socket = path !== undefined ? connectNet({ path }) : connectTls({ ...(target as { tls: ConnectionOptions }).tls, host: (target as { host: string }).host, port: (target as { port: number }).port })
      const ready = path !== undefined ? 'connect' : 'secureConnect'
      const onError = (err: Error) => reject(new WireProtocolError('connection_closed', `cannot connect to the wire at ${path ?? `${(target as { host: string }).host}:${(target as { port: number }).port}`}: ${err.message}`, err))
      socket.once('error', onError)
      socket.once(ready, () => {
        socket.off('error', onError)
        resolve(new WireClient(socket))
      })
    })
  }

  /** Resolves once the transport closed: with the failure that closed it, or undefined for a clean end. */
  get closed(): Promise<WireProtocolError | undefined> {
    return this.#closed
  }

  /** Sends a tool call; read its chunks by iterating it and await `outcome` for the result and receipt. */
  call(input: WireCallInput): WireCall {
    const id = input.id ?? randomUUID()
    const call = new WireCall(id)
    if (this.#failure !== undefined) {
      call.fail(this.#failure)
      return call
    }
    if (this.#calls.has(id)) throw new WireProtocolError('deserialization_failed', `call id ${id} is already in flight on this connection`)
    const token = typeof input.capabilityToken === 'string' ? new RawJson(input.capabilityToken.trim()) : input.capabilityToken
    this.#calls.set(id, call)
    this.#connection.send({ ...input.extra, type: 'tool_call_request', id, capability_token: token, server_id: input.serverId, tool: input.tool, params: input.params ?? {} })
    return call
  }

  /** `call(input).outcome`: the result, the receipt and the chunks once the call ended. */
  callTool(input: WireCallInput): Promise<WireCallOutcome> {
    return this.call(input).outcome
  }

  /** The capability tokens this connection has presented (and the kernel accepted as authentic). */
  listCapabilities(): Promise<Record<string, unknown>[]> {
    return this.#ask(this.#lists, { type: 'list_capabilities' })
  }

  /** Resolves when the kernel answers the heartbeat. */
  heartbeat(): Promise<void> {
    return this.#ask(this.#heartbeats, { type: 'heartbeat' })
  }

  /** Ends the connection; calls still in flight are cancelled by the kernel (their receipts say so). */
  async close(): Promise<void> {
    this.#connection.end()
    await this.#closed
  }

  #ask<T>(queue: Waiter<T>[], message: AgentMessage): Promise<T> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    return new Promise<T>((resolve, reject) => {
      queue.push({ resolve, reject })
      this.#connection.send(message)
    })
  }

  #receive(message: KernelMessage): void {
    switch (message.type) {
      case 'tool_call_chunk': {
        const call = this.#calls.get(message.id)
        if (call === undefined) return this.#violation(`a chunk for call ${message.id}, which is not in flight`)
        if (message.chunk_index !== call.chunkCount) return this.#violation(`chunk ${message.chunk_index} of call ${message.id} arrived where chunk ${call.chunkCount} was due`)
        return call.addChunk(message.data)
      }
      case 'tool_call_response': {
        const call = this.#calls.get(message.id)
        if (call === undefined) return this.#violation(`a response for call ${message.id}, which is not in flight`)
        this.#calls.delete(message.id)
        const receipt = message.receipt as RawJson
        return call.settle(message.result, receipt.value as CoreReceipt, receipt.text)
      }
      case 'capability_list': {
        const waiter = this.#lists.shift()
        if (waiter === undefined) return this.#violation('a capability_list nobody asked for')
        return waiter.resolve(message.capabilities.map(c => (c as RawJson).value as Record<string, unknown>))
      }
      case 'heartbeat': {
        const waiter = this.#heartbeats.shift()
        if (waiter === undefined) return this.#violation('a heartbeat nobody asked for')
        return waiter.resolve()
      }
      case 'capability_revoked':
        this.emit('capability_revoked', message.id)
    }
  }

  #violation(detail: string): void {
    this.#connection.destroy(new WireProtocolError('deserialization_failed', `the kernel broke the protocol: ${detail}`))
  }
}
