// Reading frames from a byte stream (spec 03, Errors): bytes are pushed as they arrive and whole
// payloads come out, in order. A prefix advertising more than 16 MiB is "message too large" the moment
// the prefix is read (nothing of that payload is buffered); the end of the stream before a whole prefix
// or payload is "connection closed", and the partial frame is never delivered. No node: imports, so a
// runtime without Node streams can drive it.
import { WireProtocolError } from '../errors.js'
import { FRAME_PREFIX_BYTES, MAX_FRAME_PAYLOAD_BYTES } from './limits.js'

export class FrameReader {
  readonly #maxPayloadBytes: number
  #chunks: Uint8Array[] = []
  #buffered = 0
  /** The payload length being waited for, once its prefix was read. */
  #expected: number | undefined
  #failed = false

  constructor(maxPayloadBytes = MAX_FRAME_PAYLOAD_BYTES) {
    this.#maxPayloadBytes = maxPayloadBytes
  }

  /** Bytes received but not yet part of a delivered payload. */
  get buffered(): number {
    return this.#buffered
  }

  /** Adds received bytes; returns the payloads now complete. Throws WireProtocolError (message_too_large). */
  push(bytes: Uint8Array): Uint8Array[] {
    if (this.#failed) throw new WireProtocolError('connection_closed', 'the frame reader already failed; open a new connection')
    if (bytes.length > 0) {
      this.#chunks.push(bytes)
      this.#buffered += bytes.length
    }
    const out: Uint8Array[] = []
    for (;;) {
      if (this.#expected === undefined) {
        if (this.#buffered < FRAME_PREFIX_BYTES) return out
        const prefix = this.#take(FRAME_PREFIX_BYTES)
        const length = new DataView(prefix.buffer, prefix.byteOffset, FRAME_PREFIX_BYTES).getUint32(0, false)
        if (length > this.#maxPayloadBytes) {
          this.#failed = true
          throw new WireProtocolError('message_too_large', `a frame advertised ${length} payload bytes, more than the ${this.#maxPayloadBytes}-byte limit`)
        }
        this.#expected = length
      }
      if (this.#buffered < this.#expected) return out
      out.push(this.#take(this.#expected))
      this.#expected = undefined
    }
  }

  /** The stream ended: throws connection_closed when a frame was cut short (it is dropped). */
  end(): void {
    if (this.#failed || (this.#expected === undefined && this.#buffered === 0)) return
    this.#failed = true
    const what = this.#expected === undefined ? `${this.#buffered} of the ${FRAME_PREFIX_BYTES} prefix bytes` : `${this.#buffered} of ${this.#expected} payload bytes`
    throw new WireProtocolError('connection_closed', `the connection ended in the middle of a frame (${what}); the partial frame was dropped`)
  }

  #take(n: number): Uint8Array {
    if (n === 0) return new Uint8Array(0)
    const first = this.#chunks[0]!
    let out: Uint8Array
    if (first.length >= n) {
      out = first.subarray(0, n)
      if (first.length === n) this.#chunks.shift()
      else this.#chunks[0] = first.subarray(n)
    } else {
      out = new Uint8Array(n)
      let filled = 0
      while (filled < n) {
        const chunk = this.#chunks[0]!
        const part = Math.min(chunk.length, n - filled)
        out.set(chunk.subarray(0, part), filled)
        filled += part
        if (part === chunk.length) this.#chunks.shift()
        else this.#chunks[0] = chunk.subarray(part)
      }
    }
    this.#buffered -= n
    return out
  }
}
