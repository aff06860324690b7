// Generated hostile requests through the real `gate api protect` in front of the test upstream
// (fast-check, fixed seed, bounded runs): methods inside and outside the seven, paths of random segments
// (percent escapes valid or not, dot segments, empty segments, encoded NUL and surrogates), queries with
// repeated keys and the capability parameter, credential headers of every shape, garbage Gate headers,
// small bodies. What must hold for every answer: no 5xx (the upstream is up: bad input is the client's
// error, a policy refusal is a 4xx); Gate's own refusals carry their spec bodies; and a response that
// names a receipt in X-Gate-Receipt-Id names its finalized receipt, which is in the SQLite file after the
// process is killed (SIGKILL), verifies against the proxy's key, and records the status the client got.
import t from 'tap'
import fc from 'fast-check'
import { request as httpRequest } from 'node:http'
import { HTTP_METHODS } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { checkStoredReceipts } from '../testing/stored-receipts.js'
import { startUpstreamApp } from '../testing/upstream-app.js'
import { schemaErrors } from '../testing/http-client.js'

const SEVEN: readonly string[] = HTTP_METHODS

interface Exchange {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
}

// node:http rather than undici: it sends any target that is legal on the wire, and raw header lists.
function send(origin: string, method: string, target: string, rawHeaders: [string, string][], body: Buffer): Promise<Exchange> {
  const url = new URL(origin)
  return new Promise((resolve, reject) => {
    // a raw header list gets no Host or framing from node:http (and for DELETE it would send a body
    // unframed): both are set here
    const headers = [['host', url.host], ['content-length', String(body.length)], ...rawHeaders].flat()
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: target, headers, agent: false }, res => {
      const chunks: Buffer[] = []
      res.on('data', c => chunks.push(c as Buffer))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${target} within 10 s`)))
    req.on('error', reject)
    req.end(body)
  })
}

const hex2 = fc.integer({ min: 0, max: 255 }).map(n => `%${n.toString(16).padStart(2, '0').toUpperCase()}`)
const segment = fc.oneof(
  fc.constantFrom('pets', '7', 'adopt', 'search', 'gate', 'evaluate', 'approvals', 'v1', '.', '..', '%2e%2e', '%2E', '', '%2F', '%00', '%ED%A0%80', '%ZZ', '%', '~', "a'b", 'a;b=c', '@', ':'),
  fc.stringMatching(/^[a-z0-9\-._~!$&'()*+,;=:@]{1,8}$/),
  fc.array(hex2, { minLength: 1, maxLength: 3 }).map(a => a.join('')),
)
const path = fc.array(segment, { minLength: 0, maxLength: 4 }).map(segments => '/' + segments.join('/'))
const queryPart = fc.oneof(
  fc.tuple(fc.constantFrom('a', 'b', 'gate_capability', '', 'x%ZZ', '%ED%A0%80', 'q'), fc.constantFrom('1', '', '%00', '%ED%A0%80', 'x+y', '%ZZ')).map(([k, v]) => `${k}=${v}`),
  fc.constantFrom('a', '=', '&', 'a=1=2'),
)
const query = fc.option(fc.array(queryPart, { maxLength: 4 }).map(parts => parts.join('&')), { nil: undefined })
const headerValue = fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).map(s => s.trim())
const credentialHeaders = fc.array(
  fc.oneof(
    fc.tuple(fc.constant('authorization'), fc.oneof(headerValue.map(v => `Bearer ${v}`), headerValue, fc.constantFrom('Bearer', 'Bearer ', 'Basic Zm9vOmJhcg==', 'bearer abc', 'Bearer\tabc'))),
    fc.tuple(fc.constant('x-api-key'), headerValue),
    fc.tuple(fc.constantFrom('x-gate-capability', 'x-gate-execution-nonce', 'x-gate-approval-id', 'cookie', 'proxy-authorization', 'x-forwarded-for', 'connection', 'te', 'upgrade'), headerValue),
  ),
  { maxLength: 4 },
)
const method = fc.oneof({ arbitrary: fc.constantFrom(...SEVEN), weight: 6 }, { arbitrary: fc.constantFrom('PROPFIND', 'TRACE', 'CONNECTX', 'get', 'M-SEARCH'), weight: 1 })
const body = fc.option(fc.uint8Array({ maxLength: 64 }).map(b => Buffer.from(b)), { nil: undefined })

t.test('hostile requests through gate api protect: no 5xx, and every named receipt is final, stored and true', async t => {
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: 'fuzz-control-token-0123456789' } })
  t.teardown(() => gate.stop('SIGKILL'))
  const live = await send(gate.url, 'GET', '/gate/live', [], Buffer.alloc(0))
  const kernelKey = (JSON.parse(live.text) as { kernel_key: string }).kernel_key

  const named = new Map<string, { status: number; what: string }>()
  const statuses: Record<number, number> = {}
  await fc.assert(
    fc.asyncProperty(method, path, query, credentialHeaders, body, async (m, p, q, headers, b) => {
      const target = q === undefined ? p : `${p}?${q}`
      const what = `${m} ${target} ${JSON.stringify(headers)}`
      // the sidecar routes are served by the same process; this property is about the proxy
      if (/^\/(gate|approvals|v1)(\/|$|\?)/.test(target)) return true
      const r = await send(gate.url, m, target, headers, m === 'GET' || m === 'HEAD' ? Buffer.alloc(0) : (b ?? Buffer.alloc(0)))
      statuses[r.status] = (statuses[r.status] ?? 0) + 1
      if (r.status >= 500) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`)
      const receiptId = r.headers['x-gate-receipt-id']
      if (typeof receiptId === 'string') named.set(receiptId, { status: r.status, what })
      if (r.status === 405) {
        // spec 01: outside the seven, 405 with Allow and no error body, whether or not the parser knew the method
        if (SEVEN.includes(m) || r.text !== '' || r.headers.allow !== SEVEN.join(', ')) throw new Error(`${what}: 405 ${JSON.stringify(r.headers)} ${r.text.slice(0, 200)}`)
        return true
      }
      if (r.status >= 400) {
        if (m === 'HEAD') return true
        let parsed: { error?: string; receipt_id?: unknown }
        try {
          parsed = JSON.parse(r.text) as typeof parsed
        } catch {
          throw new Error(`${what}: ${r.status} with a body that is not JSON: ${JSON.stringify(r.text.slice(0, 200))} ${JSON.stringify(r.headers)}`)
        }
        // (the test upstream's own 4xx bodies are JSON too, with errors not starting with gate_)
        // upstream 4xx are relayed as they are; Gate's own carry its error body
        if (parsed.error?.startsWith('gate_')) {
          const errors = schemaErrors('gate.http.error_body.v1', parsed)
          if (errors.length > 0) throw new Error(`${what}: ${r.status} error body: ${errors.join('; ')}`)
          if (parsed.error === 'gate_access_denied' && parsed.receipt_id !== receiptId) throw new Error(`${what}: the 403 body names ${String(parsed.receipt_id)}, the header ${String(receiptId)}`)
        }
      }
      return true
    }),
    { numRuns: 300, seed: 6655, includeErrorInReport: true },
  )
  t.ok(Object.keys(statuses).length >= 3, `answers by status: ${JSON.stringify(statuses)}`)
  t.ok(named.size > 100, `${named.size} answers named a receipt`)

  await gate.stop('SIGKILL')
  const { missing, invalid, receipts } = await checkStoredReceipts(db, named.keys(), kernelKey)
  t.same(missing, [], `all ${named.size} named receipts are stored after SIGKILL`)
  t.same(invalid, [], 'and verify')
  const problems: string[] = []
  for (const [id, receipt] of receipts) {
    const { status, what } = named.get(id)!
    if (receipt.response_status !== status) problems.push(`${what}: receipt ${id} records ${receipt.response_status}, the client got ${status}`)
    if (receipt.metadata?.gate_http_status_scope !== 'final') problems.push(`${what}: receipt ${id} is not the finalized receipt`)
  }
  t.same(problems, [], 'each is the finalized receipt and records the status the client got')
})
