// One connection to a native wire under test, written without Gate's own codec: the suite frames and
// reads bytes itself (a 4-byte big-endian payload length, then the payload), so it checks an
// implementation against the spec rather than against Gate's code. Every wait has a deadline.
import { connect, type Socket } from 'node:net'

export interface ReceivedFrame {
  /** The payload as UTF-8 text. */
  text: string
  /** The payload parsed, or undefined when it is not JSON. */
  value: Record<string, unknown> | undefined
}

export class WireProbe {
  readonly #socket: Socket
  readonly #frames: ReceivedFrame[] = []
  #buffer = Buffer.alloc(0)
  #closed = false
  #wake: (() => void) | undefined
  readonly #timeoutMs: number

  private constructor(socket: Socket, timeoutMs: number) {
    this.#socket = socket
    this.#timeoutMs = timeoutMs
    socket.on('data', chunk => {
      this.#buffer = Buffer.concat([this.#buffer, chunk])
      while (this.#buffer.length >= 4 && this.#buffer.length >= 4 + this.#buffer.readUInt32BE(0)) {
        const length = this.#buffer.readUInt32BE(0)
        const text = this.#buffer.subarray(4, 4 + length).toString('utf8')
        this.#buffer = this.#buffer.subarray(4 + length)
        let value: Record<string, unknown> | undefined
        try {
          value = JSON.parse(text) as Record<string, unknown>
        } catch {
          value = undefined
        }
        this.#frames.push({ text, value })
      }
      this.#poke()
    })
    const closed = () => {
      this.#closed = true
      this.#poke()
    }
    socket.on('close', closed)
    socket.on('error', closed)
  }

  /** Connects to `unix:PATH` (or a bare path). */
  static open(target: string, timeoutMs: number): Promise<WireProbe> {
    const path = target.startsWith('unix:') ? target.slice(5) : target
    return new Promise((resolve, reject) => {
      const socket = connect({ path })
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new Error(`no connection to ${target} within ${timeoutMs} ms`))
      }, timeoutMs)
      socket.once('error', err => {
        clearTimeout(timer)
        reject(new Error(`cannot connect to ${target}: ${err.message}`))
      })
      socket.once('connect', () => {
        clearTimeout(timer)
        resolve(new WireProbe(socket, timeoutMs))
      })
    })
  }

  /** Frames a payload (any text) and writes it. */
  send(payload: string | Record<string, unknown>): void {
    const bytes = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload))
    const prefix = Buffer.alloc(4)
    prefix.writeUInt32BE(bytes.length)
    this.#socket.write(Buffer.concat([prefix, bytes]))
  }

  sendBytes(bytes: Buffer): void {
    this.#socket.write(bytes)
  }

  /** Half-closes: the peer reads EOF. */
  end(): void {
    this.#socket.end()
  }

  close(): void {
    this.#socket.destroy()
  }

  get frames(): readonly ReceivedFrame[] {
    return this.#frames
  }

  /** Waits for the frame at `index` (0: the first received), or for the close; undefined when closed first. */
  async frame(index: number): Promise<ReceivedFrame | undefined> {
    await this.#until(() => this.#frames.length > index || this.#closed, `frame ${index + 1}`)
    return this.#frames[index]
  }

  /** Waits until the peer closed the transport or sent a frame; false when neither happened by the deadline. */
  async closesOrAnswers(): Promise<boolean> {
    try {
      await this.#until(() => this.#closed || this.#frames.length > 0, 'close')
      return true
    } catch {
      return false
    }
  }

  async #until(done: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + this.#timeoutMs
    while (!done()) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no ${what} within ${this.#timeoutMs} ms`)
      await new Promise<void>(resolve => {
        const timer = setTimeout(resolve, left)
        this.#wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
  }

  #poke(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}
