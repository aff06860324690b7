// Next.js App Router adapter: Web Request/Response and fetch only (no node: imports, so it runs in edge
// middleware). Maps the request into the core's input and the outcome back, nothing else.
//   withGate(handler, options)  wraps a route handler; the handler reads getGate(request).
//   gateMiddleware(options)     for middleware.ts; downstream handlers read getGateForwarded(request).
import { NextRequest, NextResponse } from 'next/server.js'
import { createEdgeGateCore, type GateAllowed, type GateContext, type GateMiddlewareOptions, type GateOutcome, type GateRequestInput } from '@gate/sdk/edge'

const contexts = new WeakMap<Request, GateContext | null>()
/** Request headers the middleware sets for downstream handlers; a client's own values are always dropped. */
const FORWARDED = ['x-gate-receipt-id', 'x-gate-fail-open'] as const

/** Gate's verdict and verified receipt for a request a `withGate` handler received; null when skipped. */
export function getGate(request: Request): GateContext | null {
  return contexts.get(request) ?? null
}

/**
 * What `gateMiddleware` passed on to the route behind it: the receipt id of the allow, or the code of a
 * fail-open pass. Both null when the middleware did not run for this path (check your `matcher`).
 */
export function getGateForwarded(request: Request): { receiptId: string | null; failOpen: string | null } {
  return { receiptId: request.headers.get('x-gate-receipt-id'), failOpen: request.headers.get('x-gate-fail-open') }
}

/** Wraps an App Router route handler: `export const POST = withGate(async req => ..., options)`. */
export function withGate<C>(handler: (request: NextRequest, context: C) => Response | Promise<Response>, options?: GateMiddlewareOptions) {
  const core = createEdgeGateCore(options)
  return async (request: NextRequest, context: C): Promise<Response> => {
    const outcome = await core.decide(toGateInput(request))
    if (!outcome.allowed) return denied(outcome)
    // the body stream was read by Gate: the handler gets a request rebuilt from the same bytes
    const forwarded = outcome.gate === null ? request : new NextRequest(appUrl(request, outcome), { method: request.method, headers: appHeaders(request, outcome), body: outcome.body, signal: request.signal })
    contexts.set(forwarded, outcome.gate)
    return withHeaders(await handler(forwarded, context), outcome.headers)
  }
}

/** Edge middleware: `export const middleware = gateMiddleware(options)` in middleware.ts. */
export function gateMiddleware(options?: GateMiddlewareOptions) {
  const core = createEdgeGateCore(options)
  return async (request: NextRequest): Promise<Response> => {
    // Next hands middleware a clone of the body: reading it here leaves the route handler's intact
    const outcome = await core.decide(toGateInput(request))
    if (!outcome.allowed) return denied(outcome)
    // even on a skipped path: a client's own x-gate-receipt-id must never reach the route
    // The gate_capability query parameter stays in the URL: only a rewrite could drop it, and Next
    // normalizes 127.0.0.1 to localhost in middleware URLs, turning such a rewrite into an external,
    // re-gated request without the token. Use withGate where the handler must not see it.
    return withHeaders(NextResponse.next({ request: { headers: appHeaders(request, outcome) } }), outcome.headers)
  }
}

function toGateInput(request: Request): GateRequestInput {
  const url = new URL(request.url)
  return {
    method: request.method,
    path: url.pathname,
    rawQuery: url.search.slice(1),
    headers: Object.fromEntries(request.headers),
    body: request.body,
  }
}

function denied(outcome: Extract<GateOutcome, { allowed: false }>): Response {
  return Response.json(outcome.body, { status: outcome.status, headers: outcome.headers })
}

function appUrl(request: Request, outcome: GateAllowed): URL {
  const url = new URL(request.url)
  if (outcome.rawQuery !== null) url.search = outcome.rawQuery
  return url
}

function appHeaders(request: Request, outcome: GateAllowed): Headers {
  const headers = new Headers(request.headers)
  for (const name of outcome.removeHeaders) headers.delete(name)
  for (const name of FORWARDED) headers.delete(name)
  for (const name of FORWARDED) if (outcome.headers[name] !== undefined) headers.set(name, outcome.headers[name])
  return headers
}

function withHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  let out = response
  for (const [name, value] of Object.entries(headers)) {
    try {
      out.headers.set(name, value)
    } catch {
      // immutable headers (a fetched or redirect response): copy once, then set
      out = new Response(out.body, out)
      out.headers.set(name, value)
    }
  }
  return out
}
