// A small node:http sidecar written for the suite's own tests. Without faults it implements the
// sidecar protocol (spec 02, with the policy rules of spec 01 and Gate's documented choices) closely
// enough to pass every check; each fault breaks exactly one behaviour, so a test can show that the
// check aimed at that behaviour FAILS. It is not Gate's sidecar and shares no code with it beyond the
// @gate/sdk protocol functions. Test support only. This module is its HTTP side; the fault table, its
// state, its decisions and its receipts are in broken-sidecar-faults.ts, broken-state.ts,
// broken-policy.ts and broken-receipts.ts; with an upstream, its proxy side is broken-proxy.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { checkHttpReceipt, signCapability, uuidv7, type CapabilityToken, type GateHttpRequest, type HttpReceipt } from '@gate/sdk'
import { validate } from '@gate/schemas'
import { findDuplicateQueryKey } from './duplicate-query-key.js'
import { listenOnLoopback } from '../fakes/loopback.js'
import type { ReceiptStoreAccess } from '../receipt-store.js'
import { coreReceiptOf } from './broken-capabilities.js'
import { createBrokenPolicy } from './broken-policy.js'
import { createBrokenProxy } from './broken-proxy.js'
import { createBrokenReceipts } from './broken-receipts.js'
import { createBrokenState, type BrokenSidecarOptions } from './broken-state.js'

export { SIDECAR_FAULTS, type SidecarFault } from './broken-sidecar-faults.js'
export type { BrokenSidecarOptions } from './broken-state.js'

export interface BrokenSidecar {
  url: string
  publicKey: string
  /** Its stored receipt texts, as the suite alters a real sidecar's receipt file. */
  receiptStore: ReceiptStoreAccess
  close(): Promise<void>
}

const EVALUATE_LIMIT = 10 * 1024 * 1024
const VERIFY_LIMIT = 1024 * 1024
const HEADER_LIMIT = 16 * 1024
const ANONYMOUS = { subject: 'anonymous', auth_method: { method: 'anonymous' } }

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** Starts the broken sidecar on 127.0.0.1:0. */
export async function startBrokenSidecar(options: BrokenSidecarOptions = {}): Promise<BrokenSidecar> {
  const state = createBrokenState(options)
  const { has, controlToken, signer, otherKey, issued, revoked, receipts, storedTexts, approvals } = state
  const brokenReceipts = createBrokenReceipts(state)
  const { signReceipt, verifyReceipt } = brokenReceipts
  const { decide } = createBrokenPolicy(state, brokenReceipts)
  const proxy = options.upstream === undefined ? undefined : createBrokenProxy(state, options.upstream, { decide, signReceipt })
  const server: Server = createServer({ maxHeaderSize: 4 * 1024 * 1024 }, (req, res) => {
    handle(req, res).catch(err => {
      if (err instanceof HttpFailure) return sendJson(res, err.status, { error: err.code, message: err.message, receipt_id: null, suggestion: null })
      sendJson(res, 500, { error: 'gate_evaluation_failed', message: String((err as Error)?.message ?? err), receipt_id: null, suggestion: null })
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://broken.local')
    const headerBytes = req.rawHeaders.reduce((n, h) => n + h.length + 2, 0)
    if (headerBytes > HEADER_LIMIT) {
      drain(req)
      if (has('huge-headers-500')) throw new HttpFailure(500, 'gate_evaluation_failed', 'headers too large for this sidecar')
      res.writeHead(431, { connection: 'close' })
      res.end()
      return
    }
    const route = `${req.method} ${url.pathname}`
    switch (route) {
      case 'GET /gate/live':
        return sendJson(
          res,
          200,
          { status: 'healthy', version: '0.0.0-broken', receipt_backend: has('live-backends-set') ? 'durable' : '', revocation_backend: has('live-backends-set') ? 'durable' : '', kernel_key: has('live-wrong-key') ? otherKey : signer.publicKey },
          has('text-content-type') ? 'text/plain' : 'application/json',
        )
      case 'GET /gate/health':
        return sendJson(res, 200, { status: has('health-status-mismatch') ? 'degraded' : 'healthy', version: '0.0.0-broken', receipt_backend: 'ephemeral', revocation_backend: 'ephemeral', kernel_key: signer.publicKey })
      case 'POST /gate/evaluate':
        return evaluateRoute(req, res)
      case 'POST /gate/verify':
        return verifyRoute(req, res)
      case 'POST /v1/capabilities/issue':
        return issueRoute(req, res)
      case 'POST /v1/revocations':
        return revokeRoute(req, res)
      case 'GET /v1/receipts/query':
        return queryRoute(req, res, url)
      default: {
        const respond = /^POST \/approvals\/([^/]+)\/respond$/.exec(route)
        if (respond !== null) return respondRoute(req, res, decodeURIComponent(respond[1]!))
        const pointLoad = /^GET \/v1\/receipts\/([0-9a-f]{64})$/.exec(route)
        if (pointLoad !== null) return receiptByIdRoute(req, res, pointLoad[1]!)
        if (proxy !== undefined && !url.pathname.startsWith('/gate/')) return proxy(req, res)
        drain(req)
        return sendJson(res, 404, { error: 'gate_not_found', message: `no route ${route}`, receipt_id: null, suggestion: null })
      }
    }
  }

  // ---- bodies -------------------------------------------------------------------------------

  async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
    const effective = has('accept-oversized') ? Infinity : limit
    const declared = req.headers['content-length']
    if (declared !== undefined && Number(declared) > effective) {
      drain(req)
      throw new HttpFailure(400, 'gate_bad_request', `body exceeds ${limit} bytes`)
    }
    const streamingLimit = has('limit-content-length-only') ? Infinity : effective
    const chunks: Buffer[] = []
    let size = 0
    let over = false
    for await (const chunk of req) {
      size += (chunk as Buffer).length
      if (size > streamingLimit) over = true
      else chunks.push(chunk as Buffer)
    }
    if (over) throw new HttpFailure(400, 'gate_bad_request', `body exceeds ${limit} bytes`)
    return Buffer.concat(chunks)
  }

  // ---- evaluate -----------------------------------------------------------------------------

  async function evaluateRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = (await readBody(req, has('evaluate-limit-1mib') ? 1024 * 1024 : EVALUATE_LIMIT)).toString('utf8')
    const request = parseRequest(text)
    const nonceHeader = readNonce(req)
    const header = single(req.headers['x-gate-capability'])
    // the control token as a bearer: an authenticated caller, who may name a token by capability_id
    const authenticated = req.headers.authorization === `Bearer ${controlToken}`
    const { verdict, evidence, capabilityId, pattern, approval, executionNonce } = decide(request, header, single(req.headers['x-gate-approval-id']), nonceHeader, authenticated)
    const status = verdict.verdict === 'deny' ? (verdict.http_status ?? 403) : verdict.verdict === 'incomplete' ? 428 : 200
    const receipt = signReceipt(request, verdict, evidence, pattern, capabilityId, status)
    const answerVerdict = has('answer-verdict-differs') && verdict.verdict === 'deny' ? { ...verdict, reason: `${verdict.reason} (summary)` } : verdict
    const answer: Record<string, unknown> = { verdict: answerVerdict, receipt }
    if (!has('omit-evidence')) answer.evidence = evidence
    if (approval !== undefined) answer.approval = approval
    if (executionNonce !== undefined) answer.execution_nonce = executionNonce
    sendJson(res, has('deny-status-403') && verdict.verdict === 'deny' ? 403 : 200, answer)
  }

  function parseRequest(text: string): GateHttpRequest {
    if (has('deep-nesting-500') && nestingDepth(text) > 1000) throw new Error('stack overflow (deep nesting)')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      if (has('bad-json-500')) throw new Error(`parser crashed: ${(err as Error).message}`)
      throw new HttpFailure(400, 'gate_bad_request', `body is not valid JSON: ${(err as Error).message}`)
    }
    const v = value as Record<string, unknown>
    if (has('large-integers-500') && typeof v === 'object' && v !== null && [v.timestamp, v.body_length].some(n => typeof n === 'number' && !Number.isSafeInteger(n))) {
      throw new Error('integer overflow')
    }
    if (!has('no-request-validation')) {
      let checked: unknown = value
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        checked = { ...v }
        if (has('accept-any-method') && typeof v.method === 'string') (checked as Record<string, unknown>).method = 'POST'
        if (has('no-caller-validation')) (checked as Record<string, unknown>).caller = ANONYMOUS
        if (has('accept-credential-headers')) delete (checked as Record<string, unknown>).headers
      }
      const result = validate('gate.http.request.v1', checked)
      if (!result.ok) throw new HttpFailure(400, 'gate_bad_request', `body is not a GateHttpRequest: ${result.errors.slice(0, 3).join('; ')}`)
    }
    if (!has('no-duplicate-detection')) {
      const duplicate = findDuplicateQueryKey(text, { decodeEscapes: !has('naive-duplicate-detection') })
      if (duplicate !== undefined) throw new HttpFailure(400, 'gate_bad_request', `query key "${duplicate}" appears more than once`)
    }
    const request = value as GateHttpRequest
    if (has('control-chars-500') && typeof request.path === 'string' && /[\u0000-\u001f]/.test(request.path)) throw new Error('control character in path')
    return request
  }

  /** The X-Gate-Execution-Nonce value (a nonce id), checked well-formed. */
  function readNonce(req: IncomingMessage): string | undefined {
    const raw = req.headers['x-gate-execution-nonce']
    if (raw === undefined || has('nonce-unchecked')) return undefined
    const value = Array.isArray(raw) ? raw.join(',') : raw
    if (value.trim() === '') {
      if (has('nonce-blank-ignored')) return undefined
      throw new HttpFailure(400, 'gate_bad_request', 'x-gate-execution-nonce header is blank')
    }
    if (!/^[0-9a-f]{32}$/.test(value)) throw new HttpFailure(400, 'gate_bad_request', 'x-gate-execution-nonce header is malformed')
    return value
  }

  // ---- verify -------------------------------------------------------------------------------

  async function verifyRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = (await readBody(req, has('verify-limit-64kib') ? 64 * 1024 : VERIFY_LIMIT)).toString('utf8')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      if (!has('verify-accepts-anything')) throw new HttpFailure(400, 'gate_bad_request', 'body is not valid JSON')
      value = {}
    }
    const r = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Record<string, unknown>
    const tag = (r.verdict as { verdict?: unknown } | undefined)?.verdict
    const tagOk = has('verify-any-verdict-tag') ? typeof tag === 'string' : ['allow', 'deny', 'cancel', 'incomplete'].includes(String(tag))
    const shapeOk = ['id', 'kernel_key', 'signature', 'content_hash', 'receipt_kind'].every(f => typeof r[f] === 'string') && tagOk
    if ((!shapeOk || r !== value) && !has('verify-accepts-anything')) throw new HttpFailure(400, 'gate_bad_request', 'body is not an HttpReceipt')
    sendJson(res, 200, verifyReceipt(r))
  }

  // ---- control routes -----------------------------------------------------------------------

  function requireControl(req: IncomingMessage): void {
    if (has('open-control-routes')) return
    if (req.headers.authorization !== `Bearer ${controlToken}`) throw new HttpFailure(401, 'gate_unauthorized', 'control token required')
  }

  async function issueRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse((await readBody(req, 64 * 1024)).toString('utf8')) as { subjectPublicKey: string; scope: CapabilityToken['scope']; ttlSeconds: number }
    requireControl(req)
    const now = Math.floor(Date.now() / 1000)
    const capability = signCapability(
      { schema: 'gate.capability.v1', id: `cap_${uuidv7()}`, subject: body.subjectPublicKey, scope: body.scope, issued_at: now, expires_at: now + body.ttlSeconds },
      signer,
    )
    issued.set(capability.id, capability)
    sendJson(res, 200, { capability })
  }

  async function respondRoute(req: IncomingMessage, res: ServerResponse, approvalId: string): Promise<void> {
    const body = JSON.parse((await readBody(req, 16 * 1024)).toString('utf8')) as { decision?: unknown }
    requireControl(req)
    const held = approvals.get(approvalId)
    if (held === undefined) throw new HttpFailure(404, 'gate_not_found', `no approval ${approvalId}`)
    if (held.state !== 'pending') throw new HttpFailure(409, 'gate_conflict', `approval ${approvalId} is ${held.state}`)
    if (body.decision !== 'approve' && body.decision !== 'deny') throw new HttpFailure(400, 'gate_bad_request', 'decision must be "approve" or "deny"')
    held.state = body.decision === 'approve' ? 'approved' : 'denied'
    sendJson(res, 200, { approval: { approval_id: approvalId, state: held.state }, receipt_id: null })
  }

  async function revokeRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse((await readBody(req, 64 * 1024)).toString('utf8')) as { capabilityId: string }
    requireControl(req)
    const newlyRevoked = !revoked.has(body.capabilityId)
    revoked.add(body.capabilityId)
    sendJson(res, 200, { capabilityId: body.capabilityId, revoked: true, newlyRevoked })
  }

  /**
   * What a stored receipt is served as (Gate's rule, docs/receipts.md): its core form once its stored
   * text verifies; else the stored text, listed in `unverifiedReceipts`. With sign-unverified-receipts
   * the core form is signed over whatever the store holds.
   */
  function serve(r: HttpReceipt): { receipt: unknown; unverified?: { receiptId: string; seq: number; failedStep: string; detail: string } } {
    const text = storedTexts.get(r.id) ?? JSON.stringify(r)
    const stored = JSON.parse(text) as HttpReceipt
    const check = has('sign-unverified-receipts') ? { failedStep: null, detail: '' } : checkHttpReceipt(stored, { trustedKeys: [signer.publicKey], receiptText: text })
    if (check.failedStep === null) return { receipt: coreReceiptOf(stored, signer, has('core-id-copied')) }
    return { receipt: stored, unverified: { receiptId: r.id, seq: receipts.indexOf(r) + 1, failedStep: check.failedStep, detail: check.detail } }
  }

  /** GET /v1/receipts/query (control token; the toolName filter only): core receipts, oldest first. */
  async function queryRoute(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    drain(req)
    requireControl(req)
    const toolName = url.searchParams.get('toolName')
    const matching = receipts.filter(r => toolName === null || `${r.method} ${r.route_pattern}` === toolName)
    const served = matching.slice(0, 200).map(serve)
    const unverified = served.flatMap(s => (s.unverified === undefined ? [] : [s.unverified]))
    sendJson(res, 200, { totalCount: matching.length, nextCursor: null, receipts: served.map(s => s.receipt), ...(unverified.length === 0 ? {} : { unverifiedReceipts: unverified }) })
  }

  /** GET /v1/receipts/{id} (control token): Gate's point load. */
  function receiptByIdRoute(req: IncomingMessage, res: ServerResponse, id: string): void {
    drain(req)
    requireControl(req)
    const r = receipts.find(x => x.id === id)
    if (r === undefined) throw new HttpFailure(404, 'gate_not_found', `receipt ${id}`)
    const served = serve(r)
    const httpReceipt = JSON.parse(storedTexts.get(id) ?? JSON.stringify(r)) as unknown
    sendJson(res, 200, {
      seq: receipts.indexOf(r) + 1,
      kind: 'decision',
      decisionReceiptId: null,
      finalReceiptIds: [],
      receipt: served.receipt,
      httpReceipt,
      ...(served.unverified === undefined ? {} : { unverifiedReceipts: [served.unverified] }),
    })
  }

  // the store the suite alters: the stored text of one receipt
  const receiptStore: ReceiptStoreAccess = {
    async alterReceipt(receiptId, from, to) {
      const text = storedTexts.get(receiptId)
      if (text === undefined || !text.includes(from)) return 0
      storedTexts.set(receiptId, text.replace(from, to))
      return 1
    },
  }

  return { ...(await listenOnLoopback(server)), publicKey: signer.publicKey, receiptStore }
}

function sendJson(res: ServerResponse, status: number, value: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(value)
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v
}

function drain(req: IncomingMessage): void {
  req.on('error', () => {})
  req.resume()
}

/** Deepest bracket nesting of a JSON text, strings skipped. */
function nestingDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return max
}
