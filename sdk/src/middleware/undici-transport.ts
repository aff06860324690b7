// The Node transport: an undici Pool to the sidecar (keep-alive, no pipelining so one slow evaluation
// never holds up another on the same socket). One deadline covers the response headers and the body.
// undici is imported when a transport is created, not with this module: `@gate/sdk` is imported by
// every `gate` command, and loading undici took about half of a command's start-up time.
import type { Pool } from 'undici'
import { GateError } from '../errors.js'
import { EvaluationFailedError, SidecarTimeoutError, SidecarUnreachableError } from '../errors.js'
import { MAX_SIDECAR_ANSWER_BYTES, type SidecarTransport, type TransportResponse } from './sidecar-client.js'

/** Options of the undici transport. */
export interface UndiciTransportOptions {
  timeoutMs: number
  connections: number
}

// undici's timeouts are per phase; they back up the overall deadline below
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])

/** A transport on an undici Pool to `sidecarUrl` (base path kept). */
export function createUndiciTransport(sidecarUrl: string, options: UndiciTransportOptions): SidecarTransport {
  const url = new URL(sidecarUrl)
  const basePath = url.pathname.replace(/\/+$/, '')
  // started now, with the app, so the first request does not wait for the import
  const pool: Promise<Pool> = import('undici').then(
    ({ Pool }) =>
      new Pool(url.origin, {
        connections: options.connections,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        connectTimeout: options.timeoutMs,
      }),
  )
  pool.catch(() => undefined)

  return {
    async send(method, path, headers, body): Promise<TransportResponse> {
      const deadline = new AbortController()
      const timer = setTimeout(() => deadline.abort(), options.timeoutMs)
      try {
        const res = await (await pool).request({ method, path: basePath + path, headers, body, signal: deadline.signal })
        // a declared length within the cap is read in one go; anything else chunk by chunk, capped
        const declared = Number(res.headers['content-length'])
        if (declared <= MAX_SIDECAR_ANSWER_BYTES) return { status: res.statusCode, text: await res.body.text() }
        const chunks: Uint8Array[] = []
        let size = 0
        for await (const chunk of res.body) {
          size += (chunk as Uint8Array).length
          if (size > MAX_SIDECAR_ANSWER_BYTES) {
            res.body.destroy()
            throw new EvaluationFailedError(`${path} answer exceeds ${MAX_SIDECAR_ANSWER_BYTES} bytes`)
          }
          chunks.push(chunk as Uint8Array)
        }
        return { status: res.statusCode, text: Buffer.concat(chunks, size).toString('utf8') }
      } catch (err) {
        if (err instanceof GateError) throw err
        if (deadline.signal.aborted || TIMEOUT_CODES.has((err as { code?: string }).code ?? '')) throw new SidecarTimeoutError(options.timeoutMs, err)
        // refused, reset, closed, DNS: the sidecar cannot be asked (fail closed by default)
        throw new SidecarUnreachableError(sidecarUrl, err)
      } finally {
        clearTimeout(timer)
      }
    },
    // a pool that never came to be (undici failed to load) has nothing to close
    close: async () => (await pool.catch(() => undefined))?.close(),
  }
}
