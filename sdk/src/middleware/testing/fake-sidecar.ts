// A small real node:http server that answers like the sidecar (spec 02) with the protocol functions,
// for the faults the real `gate sidecar` cannot be made to produce: a hang, a 500, invalid or
// schema-violating JSON, an impostor signing with another key, a receipt bound to another request.
// Every request it receives is captured for assertions. Test support only.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { validate } from '@gate/schemas'
import { callerIdentityHash, contentHash } from '../../protocol/content-hash.js'
import { signHttpReceiptJson, verifyHttpReceipt } from '../../protocol/http-receipt.js'
import { createSigner, generateSecret, type Signer } from '../../protocol/signer.js'
import { SAFE_METHODS, type GateHttpRequest, type Verdict } from '../../types.js'
import { listenForTest, type TestTransport } from './test-listen.js'

export type FakeSidecarMode =
  | 'honest'
  | 'hang' // accepts the request, never answers
  | 'hang-live' // answers evaluate honestly, never answers GET /gate/live
  | 'stall-body' // sends headers, never finishes the body
  | 'status-500'
  | 'huge-answer' // a 2 MiB answer, over the SDK's read cap
  | 'invalid-json'
  | 'schema-violation'
  | 'impostor' // signs with a key other than the one /gate/live publishes
  | 'other-request' // a valid receipt for another request id
  | 'other-content' // a valid receipt whose content_hash binds another path
  | 'cancel'
  | 'incomplete'
  | 'approval'

export interface CapturedCall {
  path: string
  headers: IncomingHttpHeaders
  body: unknown
}

export interface FakeSidecar {
  url: string
  signer: Signer
  /** Every POST /gate/evaluate body and its headers, in order. */
  readonly evaluations: CapturedCall[]
  /** Evaluate bodies that failed gate.http.request.v1 (answered 400, as the real sidecar does). */
  readonly invalidRequests: { body: unknown; errors: string[] }[]
  readonly calls: CapturedCall[]
  mode: FakeSidecarMode
  /** Number of GET /gate/live calls answered. */
  liveCalls: number
  /** When set, POST /gate/verify answers this status with an error body instead of verifying. */
  verifyStatus?: number
  /** When set, each evaluate answer's text (the receipt in its canonical form, as the sidecar sends it) is replaced by what it returns. */
  rewrite?: (answerText: string) => string
  close(): Promise<void>
}

/** Starts the fake on 127.0.0.1 with a free port, or on a Unix socket. */
export async function startFakeSidecar(mode: FakeSidecarMode = 'honest', transport: TestTransport = 'tcp'): Promise<FakeSidecar> {
  const signer = createSigner({ secret: generateSecret() })
  const impostor = createSigner({ secret: generateSecret() })
  const hanging = new Set<import('node:http').ServerResponse>()
  const nonces = new Map<string, string>()
  const fake: FakeSidecar = {
    url: '',
    signer,
    evaluations: [],
    invalidRequests: [],
    calls: [],
    mode,
    liveCalls: 0,
    close: async () => undefined,
  }
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const body = text === '' ? undefined : (JSON.parse(text) as unknown)
    const call = { path: req.url ?? '', headers: req.headers, body }
    fake.calls.push(call)
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(typeof value === 'string' ? value : JSON.stringify(value))
    }
    if (req.url === '/gate/live') {
      fake.liveCalls++
      if (fake.mode === 'hang-live') {
        hanging.add(res)
        return
      }
      return json(200, { status: 'healthy', version: 'fake', receipt_backend: '', revocation_backend: '', kernel_key: signer.publicKey })
    }
    if (req.url === '/gate/verify') {
      if (fake.verifyStatus !== undefined) return json(fake.verifyStatus, { error: 'gate_evaluation_failed', message: 'verify is down', receipt_id: null, suggestion: null })
      return json(200, verifyHttpReceipt(body, { trustedKeys: [signer.publicKey] }))
    }
    if (req.url !== '/gate/evaluate') return json(404, { error: 'gate_not_found', message: 'no route' })
    fake.evaluations.push(call)
    const valid = validate('gate.http.request.v1', body)
    if (!valid.ok) {
      fake.invalidRequests.push({ body, errors: valid.errors })
      return json(400, { error: 'gate_bad_request', message: `body is not a GateHttpRequest: ${valid.errors.join('; ')}`, receipt_id: null, suggestion: null })
    }
    switch (fake.mode) {
      case 'hang':
        hanging.add(res)
        return
      case 'stall-body':
        hanging.add(res)
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{"verdict":')
        return
      case 'huge-answer':
        return json(200, `{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`)
      case 'status-500':
        return json(500, { error: 'gate_receipt_persistence_failed', message: 'receipt could not be recorded', receipt_id: null, suggestion: null })
      case 'invalid-json':
        return json(200, '{"verdict": {"verdict": "allow"}, "receipt": ')
      case 'schema-violation':
        return json(200, { verdict: { verdict: 'allow' }, receipt: { id: 'x' }, evidence: [] })
    }
    const request = body as GateHttpRequest
    const answerText = answer(request, req.headers, fake.mode, fake.mode === 'impostor' ? impostor : signer, nonces)
    json(200, fake.rewrite?.(answerText) ?? answerText)
  })
  const { url, cleanup } = await listenForTest(server, transport)
  fake.url = url
  fake.close = async () => {
    for (const res of hanging) res.destroy()
    server.closeAllConnections()
    server.close()
    await once(server, 'close')
    cleanup()
  }
  return fake
}

/** The evaluate answer's text, the receipt embedded in its canonical form as the real sidecar does. */
function answer(request: GateHttpRequest, headers: IncomingHttpHeaders, mode: FakeSidecarMode, signer: Signer, nonces: Map<string, string>): string {
  const routePattern = request.route_pattern
  const hasToken = typeof headers['x-gate-capability'] === 'string'
  let verdict: Verdict
  let status = 200
  let approval: { approval_id: string; resume_path: string } | undefined
  if (mode === 'cancel') verdict = { verdict: 'cancel', reason: 'circuit breaker open' }
  else if (mode === 'incomplete') verdict = { verdict: 'incomplete', reason: 'execution nonce required: retry presenting the issued nonce' }
  else if (mode === 'approval') {
    verdict = { verdict: 'deny', reason: `approval required for ${request.method} ${routePattern}`, guard: 'ApprovalGuard', http_status: 409, details: { reason_code: 'approval_required' } }
    approval = { approval_id: 'a1b2c3', resume_path: '/approvals/a1b2c3/respond' }
  } else if (SAFE_METHODS.has(request.method) || hasToken) verdict = { verdict: 'allow' }
  else verdict = { verdict: 'deny', reason: 'capability required', guard: 'CapabilityGuard', http_status: 403, details: { reason_code: 'capability_required' } }
  if (verdict.verdict === 'deny') status = verdict.http_status ?? 403
  if (verdict.verdict === 'cancel') status = 500
  if (verdict.verdict === 'incomplete') status = 428
  const query = { ...(request.query ?? {}) }
  delete query.gate_capability
  const evidence = [{ guard_name: hasToken ? 'CapabilityGuard' : 'DefaultPolicyGuard', verdict: verdict.verdict === 'allow' }]
  // a strict-nonce retry: the receipt carries the request id bound to the presented nonce (spec 01)
  const nonceHeader = headers['x-gate-execution-nonce']
  const boundRequestId = typeof nonceHeader === 'string' ? nonces.get(nonceHeader) : undefined
  if (boundRequestId !== undefined) evidence.push({ guard_name: 'NonceGuard', verdict: true })
  const nonceId = globalThis.crypto.randomUUID().replace(/-/g, '')
  if (mode === 'incomplete') nonces.set(nonceId, request.request_id)
  const { receipt, json: receiptJson } = signHttpReceiptJson(
    {
      request_id: mode === 'other-request' ? '00000000-0000-7000-8000-000000000000' : (boundRequestId ?? request.request_id),
      route_pattern: routePattern,
      method: request.method,
      caller_identity_hash: callerIdentityHash(request.caller),
      verdict,
      receipt_kind: 'mediated_decision',
      boundary_class: 'prevent',
      tool_origin: 'caller_executed',
      redaction_mode: 'none',
      evidence,
      response_status: status,
      timestamp: Math.floor(Date.now() / 1000),
      content_hash: contentHash({
        body_hash: request.body_hash ?? null,
        method: request.method,
        path: mode === 'other-content' ? '/elsewhere' : request.path,
        query,
        route_pattern: routePattern,
      }),
      policy_hash: '0'.repeat(64),
      trust_level: 'mediated',
      capability_id: null,
      metadata: { gate_http_status_scope: 'decision' },
    },
    signer,
  )
  const out: Record<string, unknown> = { verdict, evidence }
  if (approval !== undefined) out.approval = approval
  if (mode === 'incomplete') {
    out.execution_nonce = {
      schema: 'gate.execution_nonce.v1',
      nonce_id: nonceId,
      request_id: request.request_id,
      caller_identity_hash: receipt.caller_identity_hash,
      method: request.method,
      route_pattern: routePattern,
      content_hash: receipt.content_hash,
      issued_at: receipt.timestamp,
      expires_at: receipt.timestamp + 60,
      kernel_key: signer.publicKey,
      signature: signer.sign(new TextEncoder().encode('nonce')),
    }
  }
  return `{"receipt":${receiptJson},${JSON.stringify(out).slice(1)}`
}
