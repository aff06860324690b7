// End to end: the real `gate api protect` process (node sidecar/dist/cli/main.js) in front of a real
// node:http upstream (testing/upstream-app.ts), receipts in a SQLite store under t.testdir(). Each
// answered request's finalized receipt is read back from the store and verified twice: by the
// process's own POST /gate/verify, and offline with verifyHttpReceipt against the /gate/live key.
// The cancel verdict and a throwing evaluator cannot be produced through the real kernel; the proxy's
// own tests (proxy/src/proxy.test.ts) cover those rows.
import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { request } from 'undici'
import { createSigner, generateSecret, sha256Hex, verifyHttpReceipt, type CapabilityToken, type HttpReceipt } from '@gate/sdk'
import { widenedDelegation } from '@gate/sdk/testing'
import { startExampleScript } from '@gate/sdk/middleware-testing'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'
import { startUpstreamApp, type EchoBody, type UpstreamApp } from '../testing/upstream-app.js'

const MAIN = new URL('./main.js', import.meta.url).pathname
const CONTROL_TOKEN = 'control-token-for-tests'
const MiB = 1024 * 1024

interface GateProcess {
  url: string
  child: ChildProcess
  storePath: string | undefined
  output(): string
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>
  exited: Promise<number | null>
}

interface GateRun {
  code: number | null
  stdout: string
  stderr: string
}

function spawnGate(args: string[]): { child: ChildProcess; out: { stdout: string; stderr: string }; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [MAIN, 'api', 'protect', ...args], {
    env: { ...process.env, GATE_CONTROL_TOKEN: CONTROL_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const out = { stdout: '', stderr: '' }
  child.stdout?.on('data', (c: Buffer) => (out.stdout += c.toString()))
  child.stderr?.on('data', (c: Buffer) => (out.stderr += c.toString()))
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  return { child, out, exited }
}

/** Starts the process and resolves with its bound URL once the listening line is printed. */
async function startGate(t: Test, args: string[]): Promise<GateProcess> {
  const { child, out, exited } = spawnGate([...args, '--listen', '127.0.0.1:0'])
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      // the last startup line (spec 01: route count, upstream URL and bound address)
      const m = /protecting \S+ with \d+ routes on (http:\/\/[^\s"]+)/.exec(out.stdout)
      if (m !== null) {
        child.stdout?.off('data', onData)
        resolve(m[1] as string)
      }
    }
    child.stdout?.on('data', onData)
    void exited.then(code => reject(new Error(`gate exited with ${code} before listening:\n${out.stdout}\n${out.stderr}`)))
  })
  let stopped: Promise<number | null> | undefined
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      return exited
    })()
    return stopped
  }
  t.teardown(stop)
  const storeIndex = args.indexOf('--receipt-store')
  return { url, child, storePath: storeIndex < 0 ? undefined : args[storeIndex + 1], output: () => out.stdout + out.stderr, stop, exited }
}

/** Runs the command to completion (startup failures). */
async function runGate(args: string[]): Promise<GateRun> {
  const { out, exited } = spawnGate([...args, '--listen', '127.0.0.1:0'])
  const code = await exited
  return { code, ...out }
}

/**
 * Reads a receipt's stored JSON from the SQLite receipt store the process writes (read-only; WAL lets
 * it read while the process runs). The table is found by its columns, not its name.
 */
async function readStoredReceipt(storePath: string, receiptId: string): Promise<HttpReceipt | undefined> {
  const sqlite3 = (await import('sqlite3')).default
  const db = await new Promise<InstanceType<typeof sqlite3.Database>>((resolve, reject) => {
    const d = new sqlite3.Database(storePath, sqlite3.OPEN_READONLY, err => (err === null ? resolve(d) : reject(err)))
  })
  const all = <T>(sql: string, params: unknown[] = []) =>
    new Promise<T[]>((resolve, reject) => db.all(sql, params, (err: Error | null, rows: T[]) => (err === null ? resolve(rows) : reject(err))))
  try {
    for (const { name } of await all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")) {
      const columns = (await all<{ name: string }>(`PRAGMA table_info("${name}")`)).map(c => c.name)
      const idColumn = columns.find(c => c === 'receipt_id')
      const jsonColumn = columns.find(c => c === 'http_json' || c === 'json' || c === 'receipt_json')
      if (idColumn === undefined || jsonColumn === undefined) continue
      const rows = await all<Record<string, string>>(`SELECT "${jsonColumn}" AS j FROM "${name}" WHERE "${idColumn}" = ?`, [receiptId])
      if (rows[0] !== undefined) return JSON.parse(rows[0].j as string) as HttpReceipt
    }
    return undefined
  } finally {
    db.close()
  }
}

/** One fixture directory per test (t.testdir() may be called once): the spec file and a store path. */
function fixture(t: Test, text = PETS_SPEC_YAML): { spec: string; store: string } {
  const dir = t.testdir({ 'openapi.yaml': text })
  return { spec: join(dir, 'openapi.yaml'), store: join(dir, 'receipts.db') }
}

async function startUpstream(t: Test, options?: Parameters<typeof startUpstreamApp>[0]): Promise<UpstreamApp> {
  const app = await startUpstreamApp(options)
  t.teardown(() => app.close())
  return app
}

async function issueToken(gate: GateProcess, toolNames: string[]): Promise<{ token: CapabilityToken; header: string }> {
  const r = await request(`${gate.url}/v1/capabilities/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      subjectPublicKey: 'ab'.repeat(32),
      scope: { grants: toolNames.map(tool_name => ({ server_id: 'http', tool_name })) },
      ttlSeconds: 3600,
    }),
  })
  const body = (await r.body.json()) as { capability: CapabilityToken }
  if (r.statusCode !== 200) throw new Error(`issue failed: ${r.statusCode} ${JSON.stringify(body)}`)
  return { token: body.capability, header: Buffer.from(JSON.stringify(body.capability)).toString('base64url') }
}

/** Revokes through the control route; resolves with its status. */
async function revokeToken(gate: GateProcess, capabilityId: string): Promise<number> {
  const r = await request(`${gate.url}/v1/revocations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ capabilityId }),
  })
  await r.body.dump()
  return r.statusCode
}

async function kernelKey(gate: GateProcess): Promise<string> {
  const r = await request(`${gate.url}/gate/live`)
  return ((await r.body.json()) as { kernel_key: string }).kernel_key
}

/**
 * The finalized receipt named by X-Gate-Receipt-Id: stored, carrying the answered status, scope final
 * and the decision receipt id, verified by the process and offline.
 */
async function checkFinalReceipt(
  t: Test,
  gate: GateProcess,
  receiptId: string | string[] | undefined,
  expected: { status: number; verdict: 'allow' | 'deny' | 'incomplete' | 'cancel' },
): Promise<HttpReceipt | undefined> {
  if (typeof receiptId !== 'string') {
    t.fail('X-Gate-Receipt-Id is missing')
    return undefined
  }
  const receipt = await readStoredReceipt(gate.storePath as string, receiptId)
  if (receipt === undefined) {
    t.fail(`receipt ${receiptId} is not in the store`)
    return undefined
  }
  t.equal(receipt.id, receiptId)
  t.equal(receipt.response_status, expected.status, 'the finalized receipt carries the answered status')
  t.equal(receipt.verdict.verdict, expected.verdict)
  t.equal(receipt.metadata?.gate_http_status_scope, 'final', 'scope final')
  const decisionId = receipt.metadata?.gate_decision_receipt_id
  t.match(decisionId, /^[0-9a-f]{64}$/, 'names its decision receipt')
  const decision = await readStoredReceipt(gate.storePath as string, decisionId as string)
  t.equal(decision?.metadata?.gate_http_status_scope, 'decision', 'the decision receipt is stored too')
  t.equal(decision?.request_id, receipt.request_id)

  const verified = await request(`${gate.url}/gate/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(receipt) })
  const v = (await verified.body.json()) as { ok: boolean; signer_trusted: boolean; authorized: boolean }
  t.equal(verified.statusCode, 200)
  t.ok(v.ok && v.signer_trusted, 'verifies at /gate/verify')
  t.equal(v.authorized, expected.verdict === 'allow')
  t.ok(verifyHttpReceipt(receipt, { trustedKeys: [await kernelKey(gate)] }).ok, 'verifies offline against the /gate/live kernel_key')
  return receipt
}

/** A request with a body, over node:http so an early answer is read even while the body is still going out. */
function sendLarge(url: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-length': String(body.length), 'content-type': 'application/octet-stream' } })
    req.on('response', res => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      res.on('error', reject)
    })
    // the proxy answers an oversized body before reading it all, then reads and drops the rest: the
    // client can send every byte and read the answer (no broken pipe)
    req.on('error', reject)
    req.end(body)
  })
}

t.test('gate api protect with a --spec and a durable receipt store', async t => {
  const upstream = await startUpstream(t)
  const files = fixture(t)
  const gate = await startGate(t, [
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
    const g = await startGate(t, ['--upstream', app.url, '--spec', files.spec, '--receipt-store', files.store])
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

t.test('strict nonces: 428 with the evaluate response, then the retry with the nonce is forwarded', async t => {
  const upstream = await startUpstream(t)
  const files = fixture(t)
  const gate = await startGate(t, ['--upstream', upstream.url, '--spec', files.spec, '--receipt-store', files.store, '--strict-nonces'])
  const { header } = await issueToken(gate, ['POST /pets'])
  const send = (extra: Record<string, string> = {}) =>
    request(`${gate.url}/pets`, { method: 'POST', body: '{"name":"n"}', headers: { 'x-gate-capability': header, 'content-type': 'application/json', ...extra } })
  const first = await send()
  t.equal(first.statusCode, 428)
  const body = (await first.body.json()) as { verdict: { verdict: string }; receipt: HttpReceipt; execution_nonce: { nonce_id: string } }
  t.equal(body.verdict.verdict, 'incomplete')
  t.match(body.execution_nonce.nonce_id, /^[0-9a-f]{32}$/)
  const receipt = await checkFinalReceipt(t, gate, first.headers['x-gate-receipt-id'], { status: 428, verdict: 'incomplete' })
  t.equal(receipt?.metadata?.gate_decision_receipt_id, body.receipt.id, 'the body is the evaluate response with the decision receipt')
  t.equal(upstream.received.length, 0)

  const retry = await send({ 'x-gate-execution-nonce': body.execution_nonce.nonce_id })
  t.equal(retry.statusCode, 201)
  await retry.body.dump()
  const final = await checkFinalReceipt(t, gate, retry.headers['x-gate-receipt-id'], { status: 201, verdict: 'allow' })
  t.equal(final?.request_id, body.receipt.request_id, 'the retry reuses the request id bound to the nonce')
})

t.test('issue 23: a delegated child wider than its link gets 403 for DELETE /pets/1, nothing forwarded', async t => {
  const upstream = await startUpstream(t)
  const files = fixture(t)
  const seed = generateSecret('ed25519')
  const seedFile = join(files.spec, '..', 'seed')
  writeFileSync(seedFile, Buffer.from(seed).toString('hex') + '\n', { mode: 0o600 })
  const gate = await startGate(t, ['--upstream', upstream.url, '--spec', files.spec, '--receipt-store', files.store, '--authority-seed-file', seedFile])
  const authority = createSigner({ secret: seed })
  const child = widenedDelegation({ authority, delegatee: createSigner({ secret: generateSecret() }), subject: 'ab'.repeat(32), now: Math.floor(Date.now() / 1000) })
  const before = upstream.received.length
  const r = await request(`${gate.url}/pets/1`, { method: 'DELETE', headers: { 'x-gate-capability': Buffer.from(JSON.stringify(child)).toString('base64url') } })
  t.equal(r.statusCode, 403)
  const body = (await r.body.json()) as Record<string, string>
  t.equal(body.error, 'gate_access_denied')
  t.match(body.message, /invalid capability: delegation_chain\[0\] does not state what it delegates/)
  const receipt = await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 403, verdict: 'deny' })
  t.match(receipt?.verdict, { guard: 'CapabilityGuard', details: { reason_code: 'capability_attenuation_unproven' } })
  t.equal(upstream.received.length, before, 'nothing forwarded')
})

t.test('an upstream that is down: 502 with X-Gate-Receipt-Id; the receipt keeps allow with status 502', async t => {
  const upstream = await startUpstreamApp()
  const downUrl = upstream.url
  await upstream.close()
  const files = fixture(t)
  const gate = await startGate(t, ['--upstream', downUrl, '--spec', files.spec, '--receipt-store', files.store])
  const r = await request(`${gate.url}/pets`)
  t.equal(r.statusCode, 502)
  t.match(await r.body.text(), /ECONNREFUSED/)
  await checkFinalReceipt(t, gate, r.headers['x-gate-receipt-id'], { status: 502, verdict: 'allow' })
})

t.test('spec auto-discovery finds each of the four probe paths and warns that the upstream decides', async t => {
  const dir = t.testdir()
  for (const path of ['/openapi.json', '/openapi.yaml', '/swagger.json', '/api-docs']) {
    const upstream = await startUpstream(t, { documents: { [path]: { status: 200, body: PETS_SPEC_YAML } } })
    const gate = await startGate(t, ['--upstream', upstream.url, '--receipt-store', join(dir, `${path.slice(1)}.db`)])
    t.match(gate.output(), new RegExp(`warning: no --spec; using the OpenAPI document served by the upstream at ${upstream.url}${path}`), path)
    t.match(gate.output(), /with 9 routes/)
    const r = await request(`${gate.url}/pets`, { method: 'POST' })
    t.equal(r.statusCode, 403, 'the discovered policy applies')
    await r.body.dump()
    t.equal(await gate.stop(), 0)
  }
})

t.test('spec auto-discovery failure: a redirect to another host and a too-large document are refused; exit 1', async t => {
  const other = await startUpstream(t, { documents: { '/openapi.json': { status: 200, body: PETS_SPEC_YAML } } })
  const upstream = await startUpstream(t, {
    documents: {
      '/openapi.json': { status: 302, headers: { location: `${other.url}/openapi.json` } },
      '/openapi.yaml': { status: 200, body: Buffer.alloc(16 * MiB + 1, 0x20) },
    },
  })
  const run = await runGate(['--upstream', upstream.url, '--receipt-store', fixture(t).store])
  t.equal(run.code, 1)
  t.match(run.stderr, /SpecLoad: no OpenAPI document found/)
  t.match(run.stderr, /openapi\.json: AuthorityDenied/)
  t.match(run.stderr, /openapi\.yaml: ResponseTooLarge/)
  t.match(run.stderr, /--spec PATH/)
  t.equal(other.received.length, 0, 'the other host was never contacted')
})

t.test('--spec-sha256 mismatch refuses to start with both hashes', async t => {
  const wrong = 'ab'.repeat(32)
  const run = await runGate(['--upstream', 'http://127.0.0.1:1', '--spec', fixture(t).spec, '--spec-sha256', wrong, '--allow-ephemeral-receipts'])
  t.equal(run.code, 1)
  t.match(run.stderr, new RegExp(`SHA-256 [0-9a-f]{64}, but --spec-sha256 expects ${wrong}; refusing to start`))
})

t.test('startup refusals', async t => {
  const dir = t.testdir({ 'openapi.yaml': PETS_SPEC_YAML, 'swagger2.yaml': 'openapi: 2.0\n' })
  const spec = join(dir, 'openapi.yaml')
  const durable = await runGate(['--upstream', 'http://127.0.0.1:1', '--spec', spec])
  t.equal(durable.code, 1, 'durable-receipts gate')
  t.match(durable.stderr, /refusing to start without durable receipts/)
  const memory = await runGate(['--upstream', 'http://127.0.0.1:1', '--spec', spec, '--receipt-store', ':memory:'])
  t.equal(memory.code, 1, 'an in-memory store counts as none')
  t.match(memory.stderr, /refusing to start without durable receipts/)
  for (const bad of ['ftp://127.0.0.1/', 'http://user:pw@127.0.0.1:1', 'not a url']) {
    const r = await runGate(['--upstream', bad, '--spec', spec, '--allow-ephemeral-receipts'])
    t.equal(r.code, 1, bad)
    t.match(r.stderr, /Config: --upstream/)
  }
  const parse = await runGate(['--upstream', 'http://127.0.0.1:1', '--spec', join(dir, 'swagger2.yaml'), '--allow-ephemeral-receipts'])
  t.equal(parse.code, 1)
  t.match(parse.stderr, /SpecParse: .*UnsupportedVersion/)
  const missing = await runGate(['--upstream', 'http://127.0.0.1:1', '--spec', '/nonexistent.yaml', '--allow-ephemeral-receipts'])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /SpecLoad: cannot read --spec/)
})

t.test('usage errors exit 2', async t => {
  for (const args of [
    [],
    ['--upstream', 'http://x', '--upstream-timeout-secs', '0'],
    ['--upstream', 'http://x', '--upstream-timeout-secs', '1.5'],
    ['--upstream', 'http://x', '--spec-sha256', 'abc'],
    ['--upstream', 'http://x', '--no-such-flag'],
  ]) {
    const r = await runGate(args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, /Usage: gate api protect/)
  }
})

t.test('--help documents every flag', async t => {
  const { child, out, exited } = spawnGate(['--help'])
  void child
  t.equal(await exited, 0)
  for (const flag of [
    '--upstream', '--spec', '--spec-sha256', '--listen', '--receipt-store', '--allow-ephemeral-receipts', '--upstream-timeout-secs',
    '--authority-seed-file', '--receipt-db', '--revocation-db', '--budget-db', '--control-url', '--control-token',
  ]) {
    t.match(out.stdout, new RegExp(`\\n\\s+${flag} `), flag)
  }
})

const EXAMPLE_DIR = fileURLToPath(new URL('../../../examples/protect/', import.meta.url))

t.test('examples/protect works as its README says', async t => {
  const upstream = await startExampleScript(t, join(EXAMPLE_DIR, 'sample-api.mjs'))
  const dir = t.testdir()
  const store = join(dir, 'receipts.db')
  const gate = await startGate(t, ['--upstream', upstream, '--spec', join(EXAMPLE_DIR, 'openapi.yaml'), '--receipt-store', store])
  t.match(gate.output(), /protecting http:\/\/127\.0\.0\.1:\d+ with 6 routes on http:\/\/127\.0\.0\.1:\d+/, 'the startup line the README shows')
  const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const r = await request(gate.url + path, { method: method as 'GET', headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers }, body })
    const text = await r.body.text()
    return { status: r.statusCode, headers: r.headers, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) }
  }

  const list = await send('GET', '/pets')
  t.equal(list.status, 200, 'a safe method is forwarded')
  t.match(list.headers['x-gate-receipt-id'], /^[0-9a-f]{64}$/)
  const refused = await send('POST', '/pets', {}, '{"name":"Tom"}')
  t.equal(refused.status, 403)
  t.match(refused.json, { error: 'gate_access_denied', message: 'capability required: POST /pets is deny-by-default' })

  const { token, header } = await issueToken(gate, ['POST /pets'])
  const created = await send('POST', '/pets', { 'x-gate-capability': header }, '{"name":"Tom"}')
  t.equal(created.status, 201, 'with a capability: forwarded, 201')
  t.match(created.json, { name: 'Tom' })
  const final = await readStoredReceipt(store, String(created.headers['x-gate-receipt-id']))
  t.equal(final?.response_status, 201, 'the receipt records the status 201')

  t.equal(await revokeToken(gate, token.id), 200)
  const afterRevoke = await send('POST', '/pets', { 'x-gate-capability': header }, '{"name":"Tom"}')
  t.equal(afterRevoke.status, 403)
  t.match(afterRevoke.json?.suggestion, /fresh/, 'with a suggestion to request a fresh token')

  const adopt = await issueToken(gate, ['POST /pets/{id}/adopt'])
  const pending = await send('POST', '/pets/1/adopt', { 'x-gate-capability': adopt.header })
  t.equal(pending.status, 409)
  t.match(pending.json, { error: 'gate_approval_required', message: 'approval required for POST /pets/{id}/adopt', kernel_receipt_id: /^[0-9a-f]{64}$/ })
  const approvalId = String(pending.json?.approval_id)
  t.equal(pending.json?.resume_path, `/approvals/${approvalId}/respond`)
  const approved = await send('POST', `/approvals/${approvalId}/respond`, { authorization: `Bearer ${CONTROL_TOKEN}` }, '{"decision":"approve"}')
  t.equal(approved.status, 200)
  const adopted = await send('POST', '/pets/1/adopt', { 'x-gate-capability': adopt.header, 'x-gate-approval-id': approvalId })
  t.equal(adopted.status, 200, 'the retry with X-Gate-Approval-Id is forwarded')
  t.match(adopted.json, { id: '1', adopted: true })
  await gate.stop()

  // "Without --spec": discovery from the API itself, pinned to the reviewed document's hash
  const specHash = sha256Hex(readFileSync(join(EXAMPLE_DIR, 'openapi.yaml')))
  const discovered = await startGate(t, ['--upstream', upstream, '--receipt-store', join(dir, 'discovered.db'), '--spec-sha256', specHash])
  t.equal((await request(`${discovered.url}/pets`)).statusCode, 200, 'the pinned, discovered document is served')
  const wrongPin = await runGate(['--upstream', upstream, '--receipt-store', join(dir, 'wrong.db'), '--spec-sha256', 'f'.repeat(64)])
  t.not(wrongPin.code, 0, 'a different document refuses to start')
  t.match(wrongPin.stdout + wrongPin.stderr, specHash, 'naming the document hash')
  t.match(wrongPin.stdout + wrongPin.stderr, 'f'.repeat(64), 'and the pinned one')
})
