// End to end: the real `gate api protect` process in front of a real upstream, with a --spec and a
// durable receipt store (testing/api-protect-fixture.ts): forwarding, denials, capabilities, approvals,
// relayed statuses and headers, streaming, timeouts, body limits and a draining stop. The cancel verdict
// and a throwing evaluator cannot be produced through the real kernel; the proxy's own tests
// (proxy/src/proxy.test.ts) cover those rows. Other files: api-protect-decisions (nonces, delegation,
// a down upstream), api-protect-startup (discovery, refusals, usage), api-protect-example.
import t from 'tap'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import { request } from 'undici'
import { checkFinalReceipt, CONTROL_TOKEN, fixture, issueToken, MiB, revokeToken, sendLarge, startProtect, startUpstream } from '../testing/api-protect-fixture.js'
import type { EchoBody } from '../testing/upstream-app.js'

t.test('gate api protect with a --spec and a durable receipt store', async t => {
  const upstream = await startUpstream(t)
  const files = fixture(t)
  const gate = await startProtect(t, [
    '--upstream', upstream.url,
    '--spec', files.spec,
    '--receipt-store', files.store,
    // short enough for the hang tests, long enough to move 10 MiB through a loaded two-core host
    '--upstream-timeout-secs', '5',
  ])
  t.match(gate.output(), new RegExp(`protecting ${upstream.url} with 9 routes on ${gate.url.replace(/[.]/g, '\\.')}`), 'logs route count, upstream and bound address')

  t.test('SessionAllow route: forwarded, X-Gate-Receipt-Id names the finalized receipt', async t => {
    const r = await request(`${gate.url}/pets`, { headers: { authorization: 'Bearer caller-1' } })
    t.equal(r.statusCode, 200)
    t.same(await r.body.json(), [{ id: 1, name: 'Rex' }])
    const receipt = await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 200, verdict: 'allow' })
    t.equal(receipt?.route_pattern, '/pets')
    t.equal(receipt?.evidence?.[0]?.guard_name, 'DefaultPolicyGuard')
  })

  t.test('DenyByDefault route without a token: 403 denial body, nothing forwarded', async t => {
    const before = upstream.received.length
    const r = await request(`${gate.url}/pets`, { method: 'POST', body: '{"name":"x"}', headers: { 'content-type': 'application/json' } })
    t.equal(r.statusCode, 403)
    const body = (await r.body.json()) as Record<string, string>
    t.equal(body.error, 'gate_access_denied')
    t.match(body.message, /capability required/)
    t.equal(body.receipt_id, r.headers['x-gate-receipt-id'])
    t.equal(body.suggestion, 'present a valid capability token in the X-Gate-Capability header or the gate_capability query parameter')
    const receipt = await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 403, verdict: 'deny' })
    t.equal(receipt?.evidence?.[0]?.guard_name, 'CapabilityGuard')
    t.equal(upstream.received.length, before)
  })

  t.test('a token that fails validation: 403 with the validation failure as the reason', async t => {
    const r = await request(`${gate.url}/pets`, { method: 'POST', headers: { 'x-gate-capability': 'not-a-token!' } })
    t.equal(r.statusCode, 403)
    t.match(((await r.body.json()) as { message: string }).message, /invalid capability/)
    await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 403, verdict: 'deny' })
  })

  t.test('a valid token: forwarded, and the forwarding rules hold at the upstream', async t => {
    const { token, header } = await issueToken(gate, ['POST /pets'])
    const body = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x0d, 0x0a, 0x7b, 0x22])
    const seen = upstream.nextRequest('/pets')
    // node:http: undici refuses to send Keep-Alive / Connection-named headers itself
    const answer = await new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
      const req = httpRequest(`${gate.url}/pets?z=9&gate_capability=${header}&a=%20b&flag`, {
        method: 'POST',
        headers: [
          'Host', new URL(gate.url).host,
          'Content-Length', String(body.length),
          'Content-Type', 'application/octet-stream',
          'Authorization', 'Bearer caller-2',
          'Connection', 'keep-alive, X-Hop-Private',
          'X-Hop-Private', 'do not forward',
          'Keep-Alive', 'timeout=5',
          'TE', 'trailers',
          'Proxy-Authorization', 'Basic cHJveHk6cHc=',
          'X-Gate-Execution-Nonce', '0'.repeat(32),
          'X-Custom-Thing', 'Kept-Value',
        ],
      })
      req.on('response', res => {
        let text = ''
        res.on('data', (c: Buffer) => (text += c.toString()))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
      })
      req.on('error', reject)
      req.end(body)
    })
    t.equal(answer.status, 201, answer.text)
    const got = await seen
    t.equal(got.url, '/pets?z=9&a=%20b&flag', 'gate_capability removed, the rest byte-identical and in order')
    t.same(got.body, body, 'body bytes identical')
    const names = got.rawHeaders.filter((_, i) => i % 2 === 0).map(n => n.toLowerCase())
    for (const gone of ['x-hop-private', 'keep-alive', 'te', 'proxy-authorization', 'x-gate-capability', 'x-gate-execution-nonce']) {
      t.notOk(names.includes(gone), `${gone} is not forwarded`)
    }
    // the upstream hop has its own connection management (undici's keep-alive), not the client's
    t.notMatch(got.headers.connection ?? '', /x-hop-private/i, "the client's Connection header is not forwarded")
    t.equal(got.headers['x-custom-thing'], 'Kept-Value')
    t.equal(got.headers.authorization, 'Bearer caller-2', "the caller's own credential reaches the upstream")
    t.equal(got.headers['content-length'], String(body.length))
    t.equal(got.headers.host, new URL(upstream.url).host, 'host is the upstream')
    const echo = JSON.parse(answer.text) as EchoBody
    t.equal(echo.bodyBase64, body.toString('base64'))
    const receipt = await checkFinalReceipt(t, gate, answer.headers['x-gate-receipt-id'] as string, { status: 201, verdict: 'allow' })
    t.equal(receipt?.capability_id, token.id)
  })

  t.test('the X-Gate-Capability header wins over the query parameter', async t => {
    const { header } = await issueToken(gate, ['POST /pets'])
    const r = await request(`${gate.url}/pets?gate_capability=garbage`, { method: 'POST', headers: { 'X-GATE-CAPABILITY': header } })
    t.equal(r.statusCode, 201)
    await r.body.dump()
  })

  t.test('a revoked capability: 403, message says revoked, suggestion says to request a fresh token', async t => {
    const { token, header } = await issueToken(gate, ['POST /pets'])
    t.equal(await revokeToken(gate, token.id), 200)
    // any route: a revoked token is refused before evaluation, even on a SessionAllow route
    for (const [method, path] of [['POST', '/pets'], ['GET', '/pets']] as const) {
      const r = await request(`${gate.url}${path}`, { method, headers: { 'x-gate-capability': header } })
      t.equal(r.statusCode, 403, `${method} ${path}`)
      const body = (await r.body.json()) as Record<string, string>
      t.match(body.message, /has been revoked/)
      t.match(body.suggestion, /fresh capability token/)
      const receipt = await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 403, verdict: 'deny' })
      t.equal(receipt?.evidence?.[0]?.guard_name, 'RevocationGuard')
    }
  })

  t.test('approval-gated route: 409 approval body; once approved, the retry is forwarded', async t => {
    const { header } = await issueToken(gate, ['POST /pets/{id}/adopt'])
    const before = upstream.received.length
    const r = await request(`${gate.url}/pets/7/adopt`, { method: 'POST', headers: { 'x-gate-capability': header }, body: '{}' })
    t.equal(r.statusCode, 409)
    const body = (await r.body.json()) as Record<string, string>
    t.equal(body.error, 'gate_approval_required')
    t.match(body.message, /approval required/)
    t.match(body.approval_id, /^[0-9a-f]+$/)
    t.equal(body.resume_path, `/approvals/${body.approval_id}/respond`)
    const receipt = await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 409, verdict: 'deny' })
    t.equal(body.kernel_receipt_id, receipt?.metadata?.gate_decision_receipt_id, 'kernel_receipt_id is the decision receipt')
    t.equal(upstream.received.length, before)

    const approve = await request(`${gate.url}${body.resume_path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    })
    t.equal(approve.statusCode, 200)
    await approve.body.dump()
    const retry = await request(`${gate.url}/pets/7/adopt`, {
      method: 'POST',
      headers: { 'x-gate-capability': header, 'x-gate-approval-id': body.approval_id as string },
      body: '{}',
    })
    t.equal(retry.statusCode, 200)
    t.equal(((await retry.body.json()) as EchoBody).url, '/pets/7/adopt')
    await checkFinalReceipt(t, gate, retry.headers['x-gate-receipt-id'], { status: 200, verdict: 'allow' })
  })

  t.test('upstream error statuses are relayed unchanged with their receipt', async t => {
    for (const status of [404, 500, 503]) {
      const r = await request(`${gate.url}/status/${status}`)
      t.equal(r.statusCode, status)
      t.same(await r.body.json(), { error: `upstream says ${status}` })
      await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status, verdict: 'allow' })
    }
  })

  t.test('hop-by-hop response headers are dropped, the rest relayed', async t => {
    const r = await request(`${gate.url}/hop`)
    t.equal(r.statusCode, 200)
    t.equal(r.headers['x-kept'], 'yes')
    t.equal(r.headers['x-upstream-private'], undefined)
    t.equal(r.headers['proxy-authenticate'], undefined)
    t.equal(await r.body.text(), 'hop\n')
  })

  t.test('responses stream: the first chunk arrives while the upstream still holds the rest', async t => {
    const r = await request(`${gate.url}/stream`)
    t.equal(r.statusCode, 200)
    await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 200, verdict: 'allow' })
    const chunks: string[] = []
    for await (const chunk of r.body) {
      chunks.push(String(chunk))
      if (chunks.length === 1) {
        t.equal(chunks[0], 'first\n')
        upstream.releaseStream()
      }
    }
    t.equal(chunks.join(''), 'first\nsecond\n')
  })

  t.test('an upstream that hangs past --upstream-timeout-secs 5 gets a bounded 502 with a receipt', async t => {
    const r = await request(`${gate.url}/hang`)
    t.equal(r.statusCode, 502)
    t.match(await r.body.text(), /--upstream-timeout-secs/)
    await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 502, verdict: 'allow' })
  })

  t.test('a body that stalls past the ceiling after the headers: the client connection is cut', async t => {
    const r = await request(`${gate.url}/hang-body`)
    t.equal(r.statusCode, 200)
    await t.rejects(r.body.text())
    await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 200, verdict: 'allow' })
  })

  t.test('a 10 MiB body is forwarded byte for byte; 10 MiB + 1 answers 400 gate_bad_request', async t => {
    const exact = Buffer.alloc(10 * MiB, 0xa5)
    exact[0] = 0
    const seen = upstream.nextRequest('/upload')
    const ok = await sendLarge(`${gate.url}/upload`, exact)
    t.equal(ok.status, 403, 'POST to an unmatched path falls back to the method rule')
    const { header } = await issueToken(gate, ['POST /upload'])
    const r = await request(`${gate.url}/upload`, { method: 'POST', body: exact, headers: { 'x-gate-capability': header } })
    t.equal(r.statusCode, 200)
    t.equal(((await r.body.json()) as EchoBody).bodyLength, exact.length)
    t.ok((await seen).body.equals(exact))
    await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 200, verdict: 'allow' })

    const over = await sendLarge(`${gate.url}/upload`, Buffer.alloc(10 * MiB + 1))
    t.equal(over.status, 400)
    t.equal(JSON.parse(over.text).error, 'gate_bad_request')
  })

  t.test('requests refused before evaluation: 400 and 405, no receipt', async t => {
    const cases: [string, Parameters<typeof request>[1], number][] = [
      ['/pets?limit=1&limit=2', {}, 400],
      ['/pets', { headers: { 'x-gate-execution-nonce': '' } }, 400],
      ['/pets', { headers: { 'x-gate-execution-nonce': 'NOT-HEX' } }, 400],
      ['/pets', { headers: { 'x-gate-execution-nonce': 'A'.repeat(32) } }, 400],
      ['/pets', { method: 'PROPFIND' }, 405],
      ['/pets', { method: 'TRACE' }, 405],
    ]
    for (const [path, opts, status] of cases) {
      const r = await request(`${gate.url}${path}`, opts)
      t.equal(r.statusCode, status, `${opts?.method ?? 'GET'} ${path} ${JSON.stringify(opts?.headers ?? {})}`)
      const text = await r.body.text()
      if (status === 400) t.equal(JSON.parse(text).error, 'gate_bad_request')
      t.equal(r.headers['x-gate-receipt-id'], undefined)
    }
  })

  t.test('SIGTERM drains: an in-flight streamed response completes before the process exits', async t => {
    const app = await startUpstream(t)
    const files = fixture(t)
    const g = await startProtect(t, ['--upstream', app.url, '--spec', files.spec, '--receipt-store', files.store])
    const r = await request(`${g.url}/stream`)
    await app.streamStarted
    g.child.kill('SIGTERM')
    await once(g.child.stdout as NodeJS.ReadableStream, 'data')
    app.releaseStream()
    t.equal(await r.body.text(), 'first\nsecond\n')
    t.equal(await g.exited, 0, 'exits 0 once drained')
    t.match(g.output(), /SIGTERM received, draining 1 in-flight/)
  })
})
