// The broken sidecar's proxy side (test support, beside broken-sidecar.ts): with an upstream it
// forwards every request that is not one of its routes, as `gate api protect` does. Each request is
// decided by the broken policy (the same faults apply), signed, and forwarded only when allowed; a deny
// answers 403 with X-Gate-Receipt-Id. Headers follow spec 01's forwarding rules plus Gate's (no
// forwarding claims, nothing else to route on, no X-Gate-*), unless the fault says otherwise.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { GateHttpRequest, GuardEvidence, HttpMethod, Verdict } from '@gate/sdk'
import { buildRequest } from '../gate-request.js'
import type { BrokenState } from './broken-state.js'

/** spec 01's list: hop-by-hop, host, content-length and the two Gate credentials. */
const SPEC_DROPPED = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length', 'x-gate-capability', 'x-gate-execution-nonce'])
/** Gate's additions (docs/security.md). */
const ROUTING = new Set(['forwarded', 'x-real-ip', 'x-original-url', 'x-original-uri', 'x-rewrite-url', 'x-original-method', 'x-original-host', 'x-envoy-original-path', 'x-host', 'x-http-host-override'])

interface ProxyDecision {
  verdict: Verdict
  evidence: GuardEvidence[]
  capabilityId: string | null
  pattern: string
}

export interface BrokenProxyDeps {
  decide(request: GateHttpRequest, header: string | undefined, approvalHeader: string | undefined, nonceHeader: string | undefined, authenticated: boolean): ProxyDecision
  signReceipt(request: GateHttpRequest, verdict: Verdict, evidence: GuardEvidence[], pattern: string, capabilityId: string | null, status: number): Record<string, unknown>
}

/** The handler for every request that is not a broken-sidecar route; `upstream` is a base URL. */
export function createBrokenProxy(state: BrokenState, upstream: string, deps: BrokenProxyDeps) {
  const { has } = state
  return async function proxy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const target = req.url ?? '/'
    const q = target.indexOf('?')
    const path = q === -1 ? target : target.slice(0, q)
    const query = q === -1 ? undefined : Object.fromEntries(new URLSearchParams(target.slice(q + 1)))
    const request = buildRequest({ method: req.method as HttpMethod, path, query, body: body.length === 0 ? null : body.toString('utf8') })
    const header = req.headers['x-gate-capability']
    const { verdict, evidence, capabilityId, pattern } = deps.decide(request, typeof header === 'string' ? header : undefined, undefined, undefined, false)
    if (verdict.verdict !== 'allow') {
      const status = verdict.verdict === 'deny' ? (verdict.http_status ?? 403) : 428
      const receipt = deps.signReceipt(request, verdict, evidence, pattern, capabilityId, status)
      const receiptId = String(receipt.id)
      const text = JSON.stringify({ error: 'gate_access_denied', message: verdict.verdict === 'deny' ? verdict.reason : verdict.verdict, receipt_id: receiptId, suggestion: null })
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-gate-receipt-id': receiptId })
      res.end(text)
      return
    }
    const receiptId = String(deps.signReceipt(request, verdict, evidence, pattern, capabilityId, 200).id)
    const url = new URL(upstream)
    // raw header lines: node adds no Host of its own to them
    const forwarded = httpRequest({ host: url.hostname, port: url.port, method: req.method, path: `${url.pathname.replace(/\/$/, '')}${target}`, headers: ['host', url.host, ...selectHeaders(req.rawHeaders, has('forward-routing-headers'))] })
    forwarded.on('response', answer => {
      res.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'x-gate-receipt-id': receiptId })
      answer.pipe(res)
    })
    forwarded.on('error', err => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(err.message)
    })
    forwarded.end(body)
  }
}

function selectHeaders(rawHeaders: readonly string[], keepRouting: boolean): string[] {
  const out: string[] = []
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase()
    if (SPEC_DROPPED.has(name)) continue
    if (!keepRouting && (ROUTING.has(name) || name.startsWith('x-forwarded-') || name.startsWith('x-gate-'))) continue
    out.push(rawHeaders[i]!, rawHeaders[i + 1]!)
  }
  return out
}
