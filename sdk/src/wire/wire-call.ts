// One tool call as an agent sees it on the native wire: the chunks as they arrive (an async iterator,
// in chunk_index order) and the outcome once the kernel's tool_call_response came (the result, the
// signed receipt and the receipt's text exactly as received, for verification over those bytes).
import type { CoreReceipt } from '../types.js'
import type { WireProtocolError } from '../errors.js'
import type { ToolCallResult } from './messages.js'

/** How a call ended: the kernel's result and receipt, and every chunk that came before it. */
export interface WireCallOutcome {
  id: string
  result: ToolCallResult
  receipt: CoreReceipt
  /** The receipt's bytes as they arrived (canonical JSON from Gate). */
  receiptText: string
  chunks: unknown[]
}

export class WireCall implements AsyncIterable<unknown> {
  readonly id: string
  /** Resolves with the outcome; rejects with a WireProtocolError when the transport closed first. */
  readonly outcome: Promise<WireCallOutcome>
  readonly #chunks: unknown[] = []
  #next = 0
  #wake: (() => void) | undefined
  #ended = false
  #failure: WireProtocolError | undefined
  #resolve!: (outcome: WireCallOutcome) => void
  #reject!: (err: WireProtocolError) => void

  constructor(id: string) {
    this.id = id
    this.outcome = new Promise<WireCallOutcome>((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
    // a caller reading only the chunks still hears of the failure there; an unread rejection is not unhandled
    this.outcome.catch(() => {})
  }

  /** Chunks received so far. */
  get chunkCount(): number {
    return this.#chunks.length
  }

  /** @internal the client's reader hands each chunk over in order */
  addChunk(data: unknown): void {
    this.#chunks.push(data)
    this.#poke()
  }

  /** @internal */
  settle(result: ToolCallResult, receipt: CoreReceipt, receiptText: string): void {
    this.#ended = true
    this.#resolve({ id: this.id, result, receipt, receiptText, chunks: [...this.#chunks] })
    this.#poke()
  }

  /** @internal */
  fail(failure: WireProtocolError): void {
    this.#ended = true
    this.#failure = failure
    this.#reject(failure)
    this.#poke()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<unknown> {
    for (;;) {
      if (this.#next < this.#chunks.length) {
        yield this.#chunks[this.#next++]
        continue
      }
      if (this.#failure !== undefined) throw this.#failure
      if (this.#ended) return
      await new Promise<void>(resolve => (this.#wake = resolve))
    }
  }

  #poke(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}
