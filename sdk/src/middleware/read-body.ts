// Reads the request body once, up to maxBodyBytes, without buffering past the limit. A Node stream is
// handed back to the app afterwards: the bytes are `unshift`ed before 'end' is emitted, so a body
// parser that runs after Gate (express.json(), @koa/bodyparser, Fastify's parser) reads the same bytes.
import { BadRequestError, PayloadTooLargeError } from '../errors.js'
import type { GateBodySource, GateRequestInput, NodeBodyStream } from './gate-types.js'
import { BodyConsumedError } from '../errors.js'

const encoder = new TextEncoder()

/** The body bytes, or null for a bodyless request (none, or zero bytes). */
export async function readBody(source: GateBodySource, headers: GateRequestInput['headers'], limitBytes: number): Promise<Uint8Array | null> {
  const declared = headers['content-length']
  if (typeof declared === 'string' && Number(declared) > limitBytes) throw new PayloadTooLargeError(limitBytes)
  let bytes: Uint8Array
  if (source === null) return null
  if (typeof source === 'string') bytes = encoder.encode(source)
  else if (source instanceof Uint8Array) bytes = source
  else if (isNodeStream(source)) {
    if (!hasBody(headers)) return null
    bytes = await readNodeStream(source, limitBytes)
  } else bytes = await readWebStream(source, limitBytes)
  if (bytes.length > limitBytes) throw new PayloadTooLargeError(limitBytes)
  return bytes.length === 0 ? null : bytes
}

/**
 * True when the request is known to have no body without reading anything (no source, or a Node stream
 * whose headers frame no body): the common GET skips readBody and its promise.
 */
export function isKnownBodyless(source: GateBodySource, headers: GateRequestInput['headers']): boolean {
  if (source !== null && !(typeof source === 'object' && isNodeStream(source) && !hasBody(headers))) return false
  const declared = headers['content-length']
  return declared === undefined || declared === '0'
}

/** RFC 9112 §6.3: a request has a body only with Transfer-Encoding or a non-zero Content-Length. */
function hasBody(headers: GateRequestInput['headers']): boolean {
  if (headers['transfer-encoding'] !== undefined) return true
  const length = headers['content-length']
  return typeof length === 'string' && length !== '0'
}

function isNodeStream(source: object): source is NodeBodyStream {
  return typeof (source as NodeBodyStream).unshift === 'function' && typeof (source as NodeBodyStream).read === 'function'
}

function readNodeStream(stream: NodeBodyStream, limitBytes: number): Promise<Uint8Array> {
  // a parser that ran first drained the stream: hashing re-serialized data would bind the wrong bytes
  if (stream.readableEnded || !stream.readable) return Promise.reject(new BodyConsumedError())
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = []
    let size = 0
    const cleanup = () => {
      stream.removeListener('readable', onReadable)
      stream.removeListener('error', onError)
      stream.removeListener('close', onClose)
    }
    const onReadable = () => {
      let chunk: unknown
      while ((chunk = stream.read()) !== null) {
        const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : (chunk as Uint8Array)
        size += bytes.length
        if (size > limitBytes) {
          cleanup()
          return reject(new PayloadTooLargeError(limitBytes))
        }
        chunks.push(bytes)
      }
      if (!isAtEnd(stream)) return
      cleanup()
      const all = concat(chunks, size)
      // Same tick as the read() that hit the end: 'end' is still pending, and a non-empty buffer cancels
      // it, so the next reader sees the bytes and then 'end'. Listener removed first: no re-entry.
      if (size > 0) stream.unshift(all)
      resolve(all)
    }
    const onError = (err: Error) => {
      cleanup()
      reject(new BadRequestError(`request body could not be read: ${err.message}`, err))
    }
    const onClose = () => {
      cleanup()
      reject(new BadRequestError('request closed before its body was complete'))
    }
    stream.on('readable', onReadable)
    stream.on('error', onError)
    stream.on('close', onClose)
  })
}

/** All data pushed: IncomingMessage says so with `complete`; other streams through their read state. */
function isAtEnd(stream: NodeBodyStream): boolean {
  if (stream.complete === true) return true
  return (stream as { _readableState?: { ended?: boolean } })._readableState?.ended === true
}

async function readWebStream(stream: ReadableStream<Uint8Array>, limitBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > limitBytes) {
      await reader.cancel().catch(() => undefined)
      throw new PayloadTooLargeError(limitBytes)
    }
    chunks.push(value)
  }
  return concat(chunks, size)
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array
  const out = new Uint8Array(size)
  let offset = 0
  for (const c of chunks) {
    out.set(c, offset)
    offset += c.length
  }
  return out
}
