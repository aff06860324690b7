// One native wire transport over a Node stream (a Unix socket, TCP or TLS): frames in through a
// FrameReader and the side's parser, frames out through the encoder. Every framing or parsing failure
// closes the transport at once without sending anything (spec 03, Errors: no in-band
// resynchronization); the end of the stream between frames is a clean close, in the middle of one a
// failure. `onClose` is called exactly once either way.
import type { Duplex } from 'node:stream'
import { isWireProtocolError, WireProtocolError } from '../errors.js'
import { encodeFrame } from './frame-encoder.js'
import { FrameReader } from './frame-reader.js'
import type { AgentMessage, KernelMessage } from './messages.js'

export interface FrameConnectionOptions<In> {
  /** The side's parser: parseAgentMessage on the kernel, parseKernelMessage on an agent. */
  parse(payload: Uint8Array): In
  onMessage(message: In): void
  /** Once: the failure that closed the transport, or undefined when the peer ended it between frames. */
  onClose(failure: WireProtocolError | undefined): void
}

export class FrameConnection<In, Out extends AgentMessage | KernelMessage> {
  readonly #socket: Duplex
  readonly #options: FrameConnectionOptions<In>
  readonly #reader = new FrameReader()
  #closed = false

  constructor(socket: Duplex, options: FrameConnectionOptions<In>) {
    this.#socket = socket
    this.#options = options
    socket.on('data', (chunk: Buffer) => this.#receive(chunk))
    socket.on('end', () => {
      try {
        this.#reader.end()
      } catch (err) {
        return this.#fail(err as WireProtocolError)
      }
      this.#finish(undefined)
    })
    socket.on('error', err => this.#fail(new WireProtocolError('connection_closed', `the connection failed: ${err.message}`, err)))
    socket.on('close', () => this.#fail(new WireProtocolError('connection_closed', 'the connection closed')))
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Bytes written but not yet handed to the operating system. */
  get writableLength(): number {
    return this.#socket.writableLength
  }

  /** Writes one message; false when the transport is closed. Throws message_too_large (nothing written). */
  send(message: Out): boolean {
    if (this.#closed) return false
    this.#socket.write(encodeFrame(message))
    return true
  }

  /** Writes raw bytes as they are (tests and conformance probes that must send what no encoder would). */
  sendBytes(bytes: Uint8Array): boolean {
    if (this.#closed) return false
    this.#socket.write(bytes)
    return true
  }

  /** Stops reading (backpressure); `resume` reads again. */
  pause(): void {
    this.#socket.pause()
  }

  resume(): void {
    this.#socket.resume()
  }

  /** Ends the transport after what was written is flushed. */
  end(): void {
    if (this.#closed) return
    this.#socket.end()
    this.#finish(undefined)
  }

  /** Closes at once; `failure` is reported to onClose. */
  destroy(failure: WireProtocolError): void {
    this.#fail(failure)
  }

  #receive(chunk: Buffer): void {
    if (this.#closed) return
    let payloads: Uint8Array[]
    try {
      payloads = this.#reader.push(chunk)
    } catch (err) {
      return this.#fail(err)
    }
    for (const payload of payloads) {
      if (this.#closed) return
      let message: In
      try {
        message = this.#options.parse(payload)
      } catch (err) {
        return this.#fail(err)
      }
      this.#options.onMessage(message)
    }
  }

  #fail(err: unknown): void {
    if (this.#closed) return
    this.#socket.destroy()
    this.#finish(isWireProtocolError(err) ? err : new WireProtocolError('deserialization_failed', (err as Error).message, err))
  }

  #finish(failure: WireProtocolError | undefined): void {
    if (this.#closed) return
    this.#closed = true
    this.#options.onClose(failure)
  }
}
