// The edge transport: Web `fetch` only (no node: modules, no undici), for Next.js middleware and any
// runtime without sockets of its own. Same contract as the undici transport.
import { GateError } from '../errors.js'
import { EvaluationFailedError, SidecarTimeoutError, SidecarUnreachableError } from '../errors.js'
import { MAX_SIDECAR_ANSWER_BYTES, type SidecarTransport, type TransportResponse } from './sidecar-client.js'

/** Options of the fetch transport. */
export interface FetchTransportOptions {
  timeoutMs: number
  /** Injected for tests and unusual runtimes; default `globalThis.fetch`. */
  fetch?: typeof fetch
}

/** A transport on `fetch` to `sidecarUrl`. */
export function createFetchTransport(sidecarUrl: string, options: FetchTransportOptions): SidecarTransport {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis)
  return {
    async send(method, path, headers, body): Promise<TransportResponse> {
      const deadline = new AbortController()
      const timer = setTimeout(() => deadline.abort(), options.timeoutMs)
      try {
        const res = await doFetch(sidecarUrl + path, { method, headers, body, signal: deadline.signal, redirect: 'error' })
        return { status: res.status, text: await readCapped(res, path) }
      } catch (err) {
        if (err instanceof GateError) throw err
        if (deadline.signal.aborted) throw new SidecarTimeoutError(options.timeoutMs, err)
        throw new SidecarUnreachableError(sidecarUrl, err)
      } finally {
        clearTimeout(timer)
      }
    },
    close: async () => undefined,
  }
}

async function readCapped(res: Response, path: string): Promise<string> {
  if (res.body === null) return ''
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > MAX_SIDECAR_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined)
      throw new EvaluationFailedError(`${path} answer exceeds ${MAX_SIDECAR_ANSWER_BYTES} bytes`)
    }
    text += decoder.decode(value, { stream: true })
  }
  return text + decoder.decode()
}
