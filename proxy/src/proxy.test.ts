// The proxy handler in front of a real node:http upstream, with an evaluator that signs real receipts
// but whose verdict the test chooses: this covers the outcomes the real kernel cannot be driven to
// (cancel, a throwing evaluator, a failing receipt write). The sidecar's api-protect.test.ts runs the
// same handler with the real kernel inside the real `gate` process.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, request as httpRequest, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { verifyHttpReceipt, type Verdict } from '@gate/sdk'
import { createProxy, type GateProxy } from './proxy.js'
import type { ProxyEvaluateInput } from './ports.js'
import { createFakeEvaluator, type FakeEvaluator } from './testing/fake-evaluator.js'

async function listen(t: Test, handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(handler)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

interface Seen {
  method: string
  url: string
  rawHeaders: string[]
  body: Buffer
}

/** An upstream that records what it received and answers by path. */
async function startUpstream(t: Test, answer?: (req: IncomingMessage, res: ServerResponse, seen: Seen) => boolean) {
  const seen: Seen[] = []
  const up = await listen(t, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', c => chunks.push(c))
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) }
      seen.push(s)
      if (answer?.(req, res, s) === true) return
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ method: s.method, url: s.url, rawHeaders: s.rawHeaders, body: s.body.toString('base64') }))
    })
  })
  return { ...up, seen }
}

type Decide = (input: ProxyEvaluateInput) => Verdict | { verdict: Verdict; approval?: { approval_id: string; resume_path: string } }
const allowAll: Decide = () => ({ verdict: 'allow' })

async function startProxy(t: Test, upstreamUrl: string, decide: Decide = allowAll, options: { upstreamTimeoutMs?: number; maxBodyBytes?: number } = {}) {
  const evaluator = createFakeEvaluator(decide)
  const proxy: GateProxy = createProxy(evaluator, { upstream: upstreamUrl, ...options })
  t.teardown(() => proxy.close())
  const front = await listen(t, (req, res) => void proxy.handle(req, res))
  return { evaluator, proxy, url: front.url }
}

function finalOf(t: Test, evaluator: FakeEvaluator, receiptId: string | string[] | undefined, status: number) {
  const final = evaluator.finalized.find(r => r.id === receiptId)
  if (final === undefined) {
    t.fail(`no finalized receipt ${String(receiptId)}`)
    return undefined
  }
  t.equal(final.response_status, status, 'the finalized receipt carries the answered status')
  t.equal(final.metadata?.gate_http_status_scope, 'final')
  t.match(final.metadata?.gate_decision_receipt_id, /^[0-9a-f]{64}$/)
  t.ok(verifyHttpReceipt(final, { trustedKeys: [evaluator.publicKey] }).ok, 'the finalized receipt verifies')
  return final
}

t.test('allow forwards upstream and X-Gate-Receipt-Id names the finalized receipt', async t => {
  const up = await startUpstream(t)
  const { url, evaluator } = await startProxy(t, up.url)
  const r = await request(`${url}/pets?limit=2`, { headers: { authorization: 'Bearer user-token' } })
  t.equal(r.statusCode, 200)
  const echo = (await r.body.json()) as { url: string }
  t.equal(echo.url, '/pets?limit=2')
  finalOf(t, evaluator, r.headers['x-gate-receipt-id'], 200)
  const input = evaluator.inputs[0] as ProxyEvaluateInput
  t.match(input.request, { method: 'GET', path: '/pets', route_pattern: '/pets', query: { limit: '2' }, body_hash: null, body_length: 0 })
  t.match(input.request.caller.subject, /^bearer:[0-9a-f]{16}$/)
  t.match(input.request.request_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/)
})

t.test('forwarding rules: path prefix kept, gate_capability removed, headers filtered, body bytes identical', async t => {
  const up = await startUpstream(t)
  const { url, evaluator } = await startProxy(t, `${up.url}/api/v1/`)
  const body = Buffer.from([0, 1, 2, 255, 254, 13, 10, 0x80])
  // node:http, because undici refuses to send Keep-Alive and Connection-named headers itself
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(`${url}/pets/7?b=2&gate_capability=TOKEN&a=%20x`, {
      method: 'POST',
      headers: [
        'X-Gate-Capability', 'HEADER-TOKEN',
        'Connection', 'X-Hop',
        'X-Hop', 'gone',
        'Keep-Alive', 'timeout=1',
        'X-Gate-Execution-Nonce', 'a'.repeat(32),
        'X-Custom', 'kept',
        'Content-Type', 'application/octet-stream',
        // raw array headers: node adds neither Host nor framing of its own
        'Host', new URL(url).host,
        'Content-Length', String(body.length),
      ],
    })
    req.on('response', res => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(body)
  })
  t.equal(status, 200)
  const seen = up.seen[0] as Seen
  t.equal(seen.url, '/api/v1/pets/7?b=2&a=%20x')
  t.same(seen.body, body)
  const names = seen.rawHeaders.filter((_, i) => i % 2 === 0).map(n => n.toLowerCase())
  for (const gone of ['x-gate-capability', 'x-hop', 'keep-alive', 'x-gate-execution-nonce']) t.notOk(names.includes(gone), gone)
  t.ok(seen.rawHeaders.includes('X-Custom'))
  const input = evaluator.inputs[0] as ProxyEvaluateInput
  t.equal(input.capabilityHeader, 'HEADER-TOKEN', 'the header wins over the query parameter')
  t.equal(input.nonceId, 'a'.repeat(32))
  t.same(input.request.query, { b: '2', a: ' x' })
  t.equal(input.request.body_length, body.length)
  t.match(input.request.body_hash, /^[0-9a-f]{64}$/)
})

t.test('the gate_capability query parameter is the token when no header is sent', async t => {
  const up = await startUpstream(t)
  const { url, evaluator } = await startProxy(t, up.url)
  await (await request(`${url}/x?gate_capability=Q`)).body.dump()
  t.equal(evaluator.inputs[0]?.capabilityHeader, 'Q')
})

t.test('deny answers the verdict status with the denial body; nothing reaches the upstream', async t => {
  const up = await startUpstream(t)
  const { url, evaluator } = await startProxy(t, up.url, () => ({ verdict: 'deny', reason: 'capability required', guard: 'CapabilityGuard', http_status: 403 }))
  const r = await request(`${url}/pets`, { method: 'POST', body: '{}' })
  t.equal(r.statusCode, 403)
  const body = (await r.body.json()) as Record<string, unknown>
  t.equal(body.error, 'gate_access_denied')
  t.equal(body.message, 'capability required')
  t.equal(body.receipt_id, r.headers['x-gate-receipt-id'])
  t.match(body.suggestion, /X-Gate-Capability header or the gate_capability query parameter/)
  finalOf(t, evaluator, r.headers['x-gate-receipt-id'], 403)
  t.equal(up.seen.length, 0)
})

t.test('a revoked capability is suggested to request a fresh token', async t => {
  const up = await startUpstream(t)
  const { url } = await startProxy(t, up.url, () => ({
    verdict: 'deny',
    reason: 'capability c1 has been revoked',
    guard: 'RevocationGuard',
    http_status: 403,
    details: { reason_code: 'capability_revoked' },
  }))
  const r = await request(`${url}/pets`, { method: 'POST' })
  const body = (await r.body.json()) as Record<string, string>
  t.match(body.message, /revoked/)
  t.match(body.suggestion, /fresh capability token/)
})

t.test('pending approval answers 409 with the approval handle', async t => {
  const up = await startUpstream(t)
  const approval = { approval_id: 'ap-1', resume_path: '/approvals/ap-1/respond' }
  const { url, evaluator } = await startProxy(t, up.url, () => ({
    verdict: { verdict: 'deny', reason: 'approval required', guard: 'ApprovalGuard', http_status: 409 },
    approval,
  }))
  const r = await request(`${url}/pets/1/adopt`, { method: 'POST' })
  t.equal(r.statusCode, 409)
  const body = (await r.body.json()) as Record<string, unknown>
  t.match(body, { error: 'gate_approval_required', message: 'approval required', approval_id: 'ap-1', resume_path: '/approvals/ap-1/respond' })
  const final = finalOf(t, evaluator, r.headers['x-gate-receipt-id'], 409)
  t.equal(body.kernel_receipt_id, final?.metadata?.gate_decision_receipt_id, 'kernel_receipt_id is the decision receipt')
  t.equal(up.seen.length, 0)
})

t.test('incomplete answers 428 and cancel 500, each with the evaluate response as the body', async t => {
  for (const [verdict, status] of [
    [{ verdict: 'incomplete', reason: 'execution nonce required' }, 428],
    [{ verdict: 'cancel', reason: 'circuit open' }, 500],
  ] as const) {
    const up = await startUpstream(t)
    const { url, evaluator } = await startProxy(t, up.url, () => verdict)
    const r = await request(`${url}/pets`, { method: 'POST' })
    t.equal(r.statusCode, status)
    const body = (await r.body.json()) as { verdict: Verdict; receipt: { id: string }; evidence: unknown[] }
    t.same(body.verdict, verdict)
    t.ok(Array.isArray(body.evidence))
    const final = finalOf(t, evaluator, r.headers['x-gate-receipt-id'], status)
    t.equal(final?.metadata?.gate_decision_receipt_id, body.receipt.id)
    t.equal(up.seen.length, 0)
  }
})

t.test('an evaluation error answers 500 gate_evaluation_failed with the error text and forwards nothing', async t => {
  const up = await startUpstream(t)
  const { url, evaluator } = await startProxy(t, up.url)
  evaluator.failEvaluate = new Error('identity hashing exploded')
  const r = await request(`${url}/pets`)
  t.equal(r.statusCode, 500)
  const body = (await r.body.json()) as Record<string, unknown>
  t.equal(body.error, 'gate_evaluation_failed')
  t.equal(body.message, 'identity hashing exploded')
  t.equal(r.headers['x-gate-receipt-id'], undefined, 'no receipt was signed')
  t.equal(up.seen.length, 0)
})

t.test('a finalized receipt that cannot be stored fails closed: 500 and the upstream answer is not relayed', async t => {
  const up = await startUpstream(t)
  const { url, evaluator } = await startProxy(t, up.url)
  evaluator.failFinalize = Object.assign(new Error('disk full'), { code: 'gate_receipt_persistence_failed' })
  const r = await request(`${url}/pets`)
  t.equal(r.statusCode, 500)
  const body = (await r.body.json()) as Record<string, unknown>
  t.equal(body.error, 'gate_evaluation_failed', 'a plain Error with a code-like property is not a GateError')
  t.equal(body.message, 'disk full')
  t.match(r.headers['x-gate-receipt-id'], /^[0-9a-f]{64}$/, 'names the stored decision receipt')
})

t.test('an upstream that is down answers 502 with X-Gate-Receipt-Id; the receipt keeps allow with status 502', async t => {
  const dead = await listen(t, () => {})
  dead.server.close()
  await once(dead.server, 'close')
  const { url, evaluator } = await startProxy(t, dead.url)
  const r = await request(`${url}/pets`)
  t.equal(r.statusCode, 502)
  t.match(await r.body.text(), /ECONNREFUSED/)
  const final = finalOf(t, evaluator, r.headers['x-gate-receipt-id'], 502)
  t.equal(final?.verdict.verdict, 'allow')
})

t.test('an upstream that never answers is cut off at the wall-clock ceiling with 502', async t => {
  const up = await startUpstream(t, () => true)
  const { url, evaluator } = await startProxy(t, up.url, allowAll, { upstreamTimeoutMs: 150 })
  const r = await request(`${url}/hang`)
  t.equal(r.statusCode, 502)
  t.match(await r.body.text(), /--upstream-timeout-secs/)
  finalOf(t, evaluator, r.headers['x-gate-receipt-id'], 502)
})

t.test('a body that stalls after the headers is cut off: the client connection is destroyed', async t => {
  const up = await startUpstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('partial\n')
    return true
  })
  const { url, evaluator } = await startProxy(t, up.url, allowAll, { upstreamTimeoutMs: 150 })
  const r = await request(`${url}/hang-body`)
  t.equal(r.statusCode, 200)
  finalOf(t, evaluator, r.headers['x-gate-receipt-id'], 200)
  await t.rejects(r.body.text(), 'the relayed body ends in an error, not a clean short body')
})

t.test('responses stream: the first chunk arrives before the upstream has finished', async t => {
  let release!: () => void
  const released = new Promise<void>(resolve => (release = resolve))
  const up = await startUpstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('first\n')
    void released.then(() => res.end('second\n'))
    return true
  })
  const { url } = await startProxy(t, up.url)
  const r = await request(`${url}/stream`)
  const chunks: string[] = []
  for await (const chunk of r.body) {
    chunks.push(String(chunk))
    if (chunks.length === 1) {
      t.equal(chunks[0], 'first\n', 'received while the upstream still holds the rest')
      release()
    }
  }
  t.equal(chunks.join(''), 'first\nsecond\n')
})

t.test('upstream error statuses and headers are relayed unchanged, hop-by-hop response headers dropped', async t => {
  const up = await startUpstream(t, (_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json', connection: 'x-private', 'x-private': '1', 'x-kept': 'yes', 'x-gate-receipt-id': 'spoofed' })
    res.end('{"error":"down"}')
    return true
  })
  const { url, evaluator } = await startProxy(t, up.url)
  const r = await request(`${url}/status`)
  t.equal(r.statusCode, 503)
  t.equal(await r.body.text(), '{"error":"down"}')
  t.equal(r.headers['x-kept'], 'yes')
  t.equal(r.headers['x-private'], undefined)
  t.not(r.headers['x-gate-receipt-id'], 'spoofed', 'the upstream cannot choose the receipt id')
  finalOf(t, evaluator, r.headers['x-gate-receipt-id'], 503)
})

t.test('HEAD is forwarded and answered without a body', async t => {
  const up = await startUpstream(t)
  const { url, evaluator } = await startProxy(t, up.url)
  const r = await request(`${url}/pets`, { method: 'HEAD' })
  t.equal(r.statusCode, 200)
  t.equal(await r.body.text(), '')
  finalOf(t, evaluator, r.headers['x-gate-receipt-id'], 200)
})

t.test('requests refused before evaluation carry no receipt', async t => {
  const up = await startUpstream(t)
  const { url, evaluator } = await startProxy(t, up.url, allowAll, { maxBodyBytes: 1024 })
  const cases: [string, Parameters<typeof request>[1], number][] = [
    ['/p?a=1&a=2', {}, 400],
    ['/p', { headers: { 'x-gate-execution-nonce': '' } }, 400],
    ['/p', { headers: { 'x-gate-execution-nonce': 'ABC' } }, 400],
    ['/p', { headers: { 'x-gate-capability': ['e30', 'e30'] } }, 400],
    ['/p', { headers: { 'x-gate-approval-id': ['a1', 'a2'] } }, 400],
    ['/p', { headers: { 'x-gate-approval-id': 'two words' } }, 400],
    ['/p', { method: 'POST', body: Buffer.alloc(1025) }, 400],
    ['/p', { method: 'PROPFIND' }, 405],
  ]
  for (const [path, opts, status] of cases) {
    const r = await request(`${url}${path}`, opts)
    t.equal(r.statusCode, status, `${opts?.method ?? 'GET'} ${path}`)
    const text = await r.body.text()
    if (status === 400) t.equal(JSON.parse(text).error, 'gate_bad_request')
    if (status === 405) t.equal(r.headers.allow, 'GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS')
    t.equal(r.headers['x-gate-receipt-id'], undefined)
  }
  const ok = await request(`${url}/p`, { method: 'POST', body: Buffer.alloc(1024) })
  t.equal(ok.statusCode, 200, 'a body exactly at the limit passes')
  await ok.body.dump()
  t.equal(evaluator.inputs.length, 1)
  t.equal(up.seen.length, 1)
})

t.test('options are validated at construction', async t => {
  const evaluator = createFakeEvaluator(allowAll)
  t.throws(() => createProxy(evaluator, { upstream: 'ftp://x' }), { name: 'ProtectError', message: /^Config: / })
  t.throws(() => createProxy(evaluator, { upstream: 'http://u:p@x' }), { name: 'ProtectError', message: /^Config: / })
  t.throws(() => createProxy(evaluator, { upstream: 'not a url' }), { name: 'ProtectError', message: /^Config: / })
  t.throws(() => createProxy(evaluator, { upstream: 'http://x', upstreamTimeoutMs: 0 }), { code: 'gate_invalid_config' })
  t.throws(() => createProxy(evaluator, { upstream: 'http://x', timeout: 5 } as never), /timeout/)
})

t.test('the route is matched once: the evaluator decides under it, and handle resolves with its pattern', async t => {
  const up = await startUpstream(t)
  const evaluator = createFakeEvaluator(allowAll)
  let matches = 0
  const matchRoute = evaluator.matchRoute
  evaluator.matchRoute = (method, path) => {
    matches++
    return matchRoute(method, path)
  }
  const proxy = createProxy(evaluator, { upstream: up.url })
  t.teardown(() => proxy.close())
  const labels: (string | undefined)[] = []
  const front = await listen(t, (req, res) => void proxy.handle(req, res).then(label => labels.push(label)))
  t.equal((await request(`${front.url}/pets/7`)).statusCode, 200)
  t.equal((await request(`${front.url}/other`)).statusCode, 200)
  t.equal(matches, 2, 'one match per request')
  t.same(evaluator.inputs.map(i => i.route), [{ pattern: '/pets/{id}', matched: true }, { pattern: '/other', matched: false }], 'the evaluator got the match')
  t.same(labels, ['/pets/{id}', undefined], 'the matched pattern, or nothing for an unmatched path')
})
