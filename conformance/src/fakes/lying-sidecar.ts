// A loopback sidecar that lies (spec 02, Fail-closed rule; SDK-side error codes): it answers every
// evaluation with an allow the SDK must not act on. Each mode is one lie:
//   status-500        500 with a Gate error body             → 502 gate_evaluation_failed
//   garbage           200 with a body that is not JSON       → 502 gate_evaluation_failed
//   schema-violation  200 {verdict: allow} without a receipt → 502 gate_evaluation_failed
//   impostor          a valid signature by a key other than the published one → 502 gate_invalid_receipt
//   tampered          a deny receipt whose verdict was flipped to allow after signing → 502 gate_invalid_receipt
//   replayed          a validly signed allow receipt of another request → 502 gate_invalid_receipt
//   verdict-mismatch  the answer says allow, its validly signed receipt says deny → 502 gate_invalid_receipt
// /gate/live publishes the honest key; /gate/verify confirms everything (a liar would).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { callerIdentityHash, contentHash, signHttpReceipt, uuidv7, type GateHttpRequest, type HttpReceipt, type Signer, type Verdict } from '@gate/sdk'
import { createUntrustedSigner } from '../capability-tokens.js'
import { listenOnLoopback, type LoopbackServer } from './loopback.js'

export type LieMode = 'status-500' | 'garbage' | 'schema-violation' | 'impostor' | 'tampered' | 'replayed' | 'verdict-mismatch'

export interface LyingSidecar extends LoopbackServer {
  /** The key /gate/live publishes (the one the SDK should pin). */
  publicKey: string
  /** Evaluate calls received. */
  evaluations: number
}

const MAX_BODY = 1024 * 1024

/** Starts a lying sidecar on 127.0.0.1:0. */
export async function startLyingSidecar(mode: LieMode): Promise<LyingSidecar> {
  const honest = createUntrustedSigner()
  const impostor = createUntrustedSigner()
  const state = { evaluations: 0 }
  const server: Server = createServer((req, res) => {
    readText(req).then(
      text => answer(req, res, text),
      () => res.destroy(),
    )
  })

  function answer(req: IncomingMessage, res: ServerResponse, text: string): void {
    const json = (status: number, value: unknown) => send(res, status, JSON.stringify(value))
    const path = (req.url ?? '/').split('?')[0]
    if (path === '/gate/live' || path === '/gate/health') {
      return json(200, { status: 'healthy', version: 'liar', receipt_backend: path === '/gate/live' ? '' : 'durable', revocation_backend: path === '/gate/live' ? '' : 'durable', kernel_key: honest.publicKey })
    }
    if (path === '/gate/verify') {
      let key = honest.publicKey
      try {
        key = String((JSON.parse(text) as { kernel_key?: unknown }).kernel_key ?? key)
      } catch {
        // keep the honest key
      }
      return json(200, {
        signature_valid: true, signer_trusted: true, receipt_id_valid: true, parameter_hash_valid: true,
        receipt_kind: 'mediated_decision', boundary_class: 'prevent', trust_level: 'mediated',
        result: 'allow', authorized: true, signer_key_hex: key, ok: true,
      })
    }
    if (path !== '/gate/evaluate') return json(404, { error: 'gate_not_found', message: 'no such route' })
    state.evaluations++
    let request: GateHttpRequest
    try {
      request = JSON.parse(text) as GateHttpRequest
    } catch {
      return json(400, { error: 'gate_bad_request', message: 'body is not JSON' })
    }
    switch (mode) {
      case 'status-500':
        return json(500, { error: 'gate_evaluation_failed', message: 'the liar failed on purpose' })
      case 'garbage':
        return send(res, 200, '<html>definitely not an EvaluateResponse')
      case 'schema-violation':
        return json(200, { verdict: { verdict: 'allow' }, evidence: [] })
      case 'impostor': {
        const receipt = receiptFor(request, { verdict: 'allow' }, impostor)
        return json(200, { verdict: receipt.verdict, receipt, evidence: receipt.evidence ?? [] })
      }
      case 'tampered': {
        const signed = receiptFor(request, { verdict: 'deny', reason: 'denied', guard: 'CapabilityGuard', http_status: 403 }, honest)
        const receipt: HttpReceipt = { ...signed, verdict: { verdict: 'allow' }, response_status: 200 }
        return json(200, { verdict: receipt.verdict, receipt, evidence: receipt.evidence ?? [] })
      }
      case 'replayed': {
        const other: GateHttpRequest = { ...request, request_id: uuidv7(), path: '/gate-conformance/another-request', route_pattern: '/gate-conformance/another-request' }
        const receipt = receiptFor(other, { verdict: 'allow' }, honest)
        return json(200, { verdict: receipt.verdict, receipt, evidence: receipt.evidence ?? [] })
      }
      case 'verdict-mismatch': {
        const receipt = receiptFor(request, { verdict: 'deny', reason: 'denied', guard: 'CapabilityGuard', http_status: 403 }, honest)
        return json(200, { verdict: { verdict: 'allow' }, receipt, evidence: receipt.evidence ?? [] })
      }
    }
  }

  const loopback = await listenOnLoopback(server)
  return {
    ...loopback,
    publicKey: honest.publicKey,
    get evaluations() {
      return state.evaluations
    },
  }
}

/** A correctly signed receipt for `request` with `verdict`, as an honest sidecar would write it. */
function receiptFor(request: GateHttpRequest, verdict: Verdict, signer: Signer): HttpReceipt {
  const allow = verdict.verdict === 'allow'
  return signHttpReceipt(
    {
      request_id: request.request_id,
      route_pattern: request.path,
      method: request.method,
      caller_identity_hash: callerIdentityHash(request.caller),
      session_id: request.session_id ?? null,
      verdict,
      receipt_kind: 'mediated_decision',
      boundary_class: 'prevent',
      tool_origin: 'caller_executed',
      redaction_mode: 'none',
      evidence: [{ guard_name: allow ? 'DefaultPolicyGuard' : 'CapabilityGuard', verdict: allow }],
      response_status: allow ? 200 : 403,
      timestamp: Math.floor(Date.now() / 1000),
      content_hash: contentHash({ body_hash: request.body_hash ?? null, method: request.method, path: request.path, query: request.query ?? {}, route_pattern: request.path }),
      policy_hash: '0'.repeat(64),
      trust_level: 'mediated',
      capability_id: null,
      metadata: null,
    },
    signer,
  )
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > MAX_BODY) req.destroy(new Error('too large'))
      else chunks.push(c)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}
