// Reads one HTTP/1.1 response from the bytes of a connection, as they arrive (RFC 9112): the status
// line, the framing headers, and a body delimited by Content-Length, chunked transfer coding or the
// end of the connection. Strict on purpose: anything ambiguous (Content-Length and Transfer-Encoding
// together, differing lengths, folded header lines, bytes after the answer) is an error, and the
// socket transport then answers gate_evaluation_failed and drops the connection (fail closed).
import { EvaluationFailedError } from '../errors.js'

/** A complete response. */
export interface Http1Response {
  status: number
  body: Buffer
  /** The connection may carry the next request. */
  keepAlive: boolean
  /** Seconds the server keeps an idle connection open (its `Keep-Alive: timeout=N`), when it says. */
  keepAliveSeconds: number | undefined
}

/** Largest response head read (status line and headers). */
const MAX_HEAD_BYTES = 16 * 1024
// strings, not Buffers: this module loads on the edge runtime too, where Buffer does not exist
const HEAD_END = '\r\n\r\n'
const CRLF = '\r\n'
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\r\n]*)?$/
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const DIGITS = /^\d{1,15}$/
const CHUNK_SIZE = /^([0-9a-fA-F]{1,8})(?:[ \t]*;[^\r\n]*)?$/

type Framing = { kind: 'length'; remaining: number } | { kind: 'chunked'; state: 'size' | 'data' | 'data-end' | 'trailer'; remaining: number } | { kind: 'close' }

/** Parses one response; create one per request. Every failure throws EvaluationFailedError. */
export class Http1ResponseReader {
  readonly #maxBodyBytes: number
  readonly #path: string
  #pending: Buffer | undefined
  #framing: Framing | undefined
  #status = 0
  #keepAlive = false
  #keepAliveSeconds: number | undefined
  readonly #body: Buffer[] = []
  #bodyBytes = 0

  /** `path` names the request in error messages. */
  constructor(maxBodyBytes: number, path: string) {
    this.#maxBodyBytes = maxBodyBytes
    this.#path = path
  }

  /**
   * Takes the next bytes; returns the response once it is complete. `chunk` may be a view of a buffer
   * the caller reuses for its next read: whatever is kept beyond this call is copied, and a response
   * complete in this one chunk has its body as a view of it, valid until the caller's next read.
   */
  push(chunk: Buffer): Http1Response | undefined {
    let data = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk])
    this.#pending = undefined
    while (this.#framing === undefined) {
      const end = data.indexOf(HEAD_END)
      if (end < 0) {
        if (data.length > MAX_HEAD_BYTES) throw this.#fail(`response head exceeds ${MAX_HEAD_BYTES} bytes`)
        this.#pending = Buffer.from(data)
        return undefined
      }
      this.#readHead(data.toString('latin1', 0, end))
      data = data.subarray(end + 4)
    }
    return this.#readBody(data)
  }

  /** The peer closed the connection: the response, if its end was the close; else throws. */
  end(): Http1Response {
    if (this.#framing?.kind !== 'close') throw this.#fail('the connection closed before the answer was complete')
    return this.#done()
  }

  #readHead(head: string): void {
    const lines = head.split('\r\n')
    const status = STATUS_LINE.exec(lines[0] as string)
    if (status === null) throw this.#fail('answered something other than an HTTP/1.1 status line')
    const code = Number(status[2])
    let length: string | undefined
    let transferEncoding: string | undefined
    let connection = ''
    let keepAliveSeconds: number | undefined
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] as string
      const colon = line.indexOf(':')
      const name = colon > 0 ? line.slice(0, colon) : ''
      // obsolete line folding and nameless lines included (RFC 9112 §5.2: a client may refuse them)
      if (!FIELD_NAME.test(name)) throw this.#fail('answered a malformed header line')
      const value = line.slice(colon + 1).trim()
      switch (name.toLowerCase()) {
        case 'content-length':
          for (const part of value.split(',')) {
            const v = part.trim()
            if (!DIGITS.test(v) || (length !== undefined && length !== v)) throw this.#fail('answered an invalid or conflicting Content-Length')
            length = v
          }
          break
        case 'transfer-encoding':
          transferEncoding = transferEncoding === undefined ? value : `${transferEncoding}, ${value}`
          break
        case 'connection':
          connection += `${value.toLowerCase()},`
          break
        case 'keep-alive': {
          const m = /(?:^|[,\s])timeout=(\d{1,6})/i.exec(value)
          if (m !== null) keepAliveSeconds = Number(m[1])
          break
        }
      }
    }
    // interim answers (100 Continue, 103 Early Hints) come before the real one; 101 would switch protocols
    if (code < 200) {
      if (code === 101) throw this.#fail('tried to switch protocols')
      return
    }
    this.#status = code
    this.#keepAlive = status[1] === '1' && !/(?:^|[\s,])close,/.test(connection)
    this.#keepAliveSeconds = keepAliveSeconds
    if (transferEncoding !== undefined) {
      // RFC 9112 §6.3: both framings at once is how requests get smuggled; chunked must be the only coding
      if (length !== undefined || transferEncoding.toLowerCase() !== 'chunked') throw this.#fail('answered an unsupported or conflicting Transfer-Encoding')
      this.#framing = { kind: 'chunked', state: 'size', remaining: 0 }
    } else if (code === 204 || code === 304) {
      this.#framing = { kind: 'length', remaining: 0 }
    } else if (length !== undefined) {
      const n = Number(length)
      if (n > this.#maxBodyBytes) throw this.#tooLarge()
      this.#framing = { kind: 'length', remaining: n }
    } else {
      this.#framing = { kind: 'close' }
      this.#keepAlive = false
    }
  }

  #readBody(data: Buffer): Http1Response | undefined {
    const framing = this.#framing as Framing
    if (framing.kind === 'length') {
      if (data.length > framing.remaining) throw this.#fail('sent bytes after the end of its answer')
      framing.remaining -= data.length
      // the common answer: head and whole body in one read, its body taken as it lies
      if (framing.remaining === 0 && this.#body.length === 0) return this.#done(data)
      this.#append(data)
      return framing.remaining === 0 ? this.#done() : undefined
    }
    if (framing.kind === 'close') {
      this.#append(data)
      return undefined
    }
    return this.#readChunks(framing, data)
  }

  #readChunks(framing: Extract<Framing, { kind: 'chunked' }>, data: Buffer): Http1Response | undefined {
    let at = 0
    while (at < data.length) {
      if (framing.state === 'data') {
        const take = Math.min(framing.remaining, data.length - at)
        this.#append(data.subarray(at, at + take))
        at += take
        framing.remaining -= take
        if (framing.remaining === 0) framing.state = 'data-end'
        continue
      }
      const eol = data.indexOf(CRLF, at)
      if (eol < 0) {
        if (data.length - at > 1024) throw this.#fail('answered an overlong chunk line')
        this.#pending = Buffer.from(data.subarray(at))
        return undefined
      }
      const line = data.toString('latin1', at, eol)
      at = eol + 2
      if (framing.state === 'data-end') {
        if (line !== '') throw this.#fail('answered a chunk longer than its size')
        framing.state = 'size'
      } else if (framing.state === 'size') {
        const m = CHUNK_SIZE.exec(line)
        if (m === null) throw this.#fail('answered a malformed chunk size')
        const size = parseInt(m[1] as string, 16)
        if (this.#bodyBytes + size > this.#maxBodyBytes) throw this.#tooLarge()
        framing.remaining = size
        framing.state = size === 0 ? 'trailer' : 'data'
      } else if (line === '') {
        // the empty line after the (ignored) trailer fields ends the message
        if (at !== data.length) throw this.#fail('sent bytes after the end of its answer')
        return this.#done()
      } else if (line.length > 1024 || line.indexOf(':') <= 0) {
        throw this.#fail('answered a malformed trailer')
      }
    }
    return undefined
  }

  #append(bytes: Buffer): void {
    if (bytes.length === 0) return
    this.#bodyBytes += bytes.length
    if (this.#bodyBytes > this.#maxBodyBytes) throw this.#tooLarge()
    this.#body.push(Buffer.from(bytes))
  }

  #done(whole?: Buffer): Http1Response {
    const body = whole ?? (this.#body.length === 1 ? (this.#body[0] as Buffer) : Buffer.concat(this.#body, this.#bodyBytes))
    return { status: this.#status, body, keepAlive: this.#keepAlive, keepAliveSeconds: this.#keepAliveSeconds }
  }

  #tooLarge(): EvaluationFailedError {
    return new EvaluationFailedError(`${this.#path} answer exceeds ${this.#maxBodyBytes} bytes`)
  }

  #fail(problem: string): EvaluationFailedError {
    return new EvaluationFailedError(`${this.#path} ${problem}`)
  }
}
