// Reads a request body into one Buffer, refusing more than `limitBytes` without buffering the excess.
import type { IncomingMessage } from 'node:http'
import { BadRequestError } from '../errors.js'
import { bodyChargeOf } from './body-budget.js'

export class BodyTooLargeError extends BadRequestError {
  /**
   * @param draining true while the rest of the body is read and dropped, so the client can finish
   *   sending and read the answer on a connection that stays usable; false when the declared length is
   *   past what is worth reading, and the answer must close the connection (`sendError` does).
   */
  constructor(
    readonly limitBytes: number,
    readonly draining: boolean,
  ) {
    super(`request body exceeds the limit of ${limitBytes} bytes`)
    this.name = 'BodyTooLargeError'
  }
}

/** Past the limit the rest of a body is read and dropped (so the client sees the answer instead of a
 *  broken pipe), up to this many bytes; a client sending more loses the connection. */
export const DISCARD_CAP_BYTES = 64 * 1024 * 1024

/** How long a refused body may take to finish arriving before the connection is closed: a client
 *  trickling the rest of an oversized upload must not hold a connection until the request timeout. */
export const DRAIN_DEADLINE_MS = 10_000

/** Options of `readBody`. */
export interface ReadBodyOptions {
  /** Default `DRAIN_DEADLINE_MS`. */
  drainDeadlineMs?: number
}

/**
 * The whole body; rejects with BodyTooLargeError past the limit (checked on Content-Length first), or
 * with BodyBudgetExceededError when the server's bodies in flight would pass their bound (body-budget.ts).
 */
export function readBody(req: IncomingMessage, limitBytes: number, options: ReadBodyOptions = {}): Promise<Buffer> {
  const drainDeadlineMs = options.drainDeadlineMs ?? DRAIN_DEADLINE_MS
  const header = req.headers['content-length']
  const declared = header === undefined ? undefined : Number(header)
  if (declared !== undefined && declared > limitBytes) {
    const draining = declared <= DISCARD_CAP_BYTES
    if (draining) discardRest(req, drainDeadlineMs)
    return Promise.reject(new BodyTooLargeError(limitBytes, draining))
  }
  const charge = bodyChargeOf(req)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = (err: Error | undefined, value?: Buffer) => {
      if (done) return
      done = true
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('aborted', onAborted)
      if (err !== undefined) reject(err)
      else resolve(value as Buffer)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limitBytes) {
        finish(new BodyTooLargeError(limitBytes, true))
        discardRest(req, drainDeadlineMs)
        return
      }
      const refused = charge?.take(chunk.length)
      if (refused !== undefined) {
        finish(refused)
        discardRest(req, drainDeadlineMs)
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => finish(undefined, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size))
    const onError = (err: Error) => finish(new BadRequestError(`request body could not be read: ${err.message}`, err))
    const onAborted = () => finish(new BadRequestError('request aborted by the client'))
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('aborted', onAborted)
  })
}

function discardRest(req: IncomingMessage, deadlineMs: number): void {
  let dropped = 0
  // the answer went out when the body was refused; this only ends the wait for the rest of the upload
  const deadline = setTimeout(() => req.destroy(), deadlineMs)
  deadline.unref()
  const stop = () => clearTimeout(deadline)
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > DISCARD_CAP_BYTES) req.destroy()
  })
  req.once('end', stop)
  req.once('close', stop)
  req.on('error', () => {})
  req.resume()
}
