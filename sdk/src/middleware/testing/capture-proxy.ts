// A recording pass-through in front of a sidecar: every call the SDK makes is kept (path, headers,
// body) and forwarded unchanged, so tests can assert on exactly what reached the real sidecar.
import { once } from 'node:events'
import { createServer } from 'node:http'
import { request } from 'undici'
import type { CapturedCall } from './fake-sidecar.js'
import { listenForTest, requestTarget, type TestTransport } from './test-listen.js'

export interface CaptureProxy {
  url: string
  readonly calls: CapturedCall[]
  /** The raw text of every request, for "never contains" assertions. */
  readonly rawTexts: string[]
  /** The parsed answer of every POST /gate/evaluate, in order. */
  readonly answers: any[] // eslint-disable-line @typescript-eslint/no-explicit-any -- read by assertions
  /** The receipt of the last evaluate answer. */
  lastReceipt(): any // eslint-disable-line @typescript-eslint/no-explicit-any
  close(): Promise<void>
}

/** A capture proxy in front of `targetUrl`, itself listening on `transport` (default TCP). */
export async function startCaptureProxy(targetUrl: string, transport: TestTransport = 'tcp'): Promise<CaptureProxy> {
  const calls: CapturedCall[] = []
  const rawTexts: string[] = []
  const answers: unknown[] = []
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    rawTexts.push(JSON.stringify(req.headers) + '\n' + text)
    calls.push({ path: req.url ?? '', headers: req.headers, body: text === '' ? undefined : JSON.parse(text) })
    const headers = { ...req.headers }
    delete headers.host
    delete headers.connection
    const target = requestTarget(targetUrl, req.url ?? '/')
    try {
      const upstream = await request(target.url, { method: req.method as 'POST', headers, body: text === '' ? undefined : text, dispatcher: target.dispatcher })
      const out = Buffer.from(await upstream.body.arrayBuffer())
      if (req.url === '/gate/evaluate' && upstream.statusCode === 200) answers.push(JSON.parse(out.toString('utf8')))
      const outHeaders: Record<string, string> = {}
      for (const [k, v] of Object.entries(upstream.headers)) if (k !== 'transfer-encoding' && k !== 'connection' && v !== undefined) outHeaders[k] = String(v)
      res.writeHead(upstream.statusCode, outHeaders)
      res.end(out)
    } catch {
      res.destroy()
    } finally {
      await target.dispatcher?.close()
    }
  })
  const { url, cleanup } = await listenForTest(server, transport)
  return {
    url,
    calls,
    rawTexts,
    answers,
    lastReceipt: () => (answers[answers.length - 1] as { receipt?: unknown } | undefined)?.receipt,
    async close() {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
      cleanup()
    },
  }
}
