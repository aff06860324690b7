// Spans for Gate's own HTTP services (docs/observability.md, "Traces"), on @opentelemetry/api only:
// the service registers the SDK (sidecar observability/tracing.ts) and hands its tracer in. Callers
// use these only when a tracer is configured; with tracing off nothing here runs.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api'

/** Records `err` on the span (exception event, ERROR status, `error.type`: its `gate_*` code or name); returns the span. */
export function markSpanError(span: Span, err: unknown): Span {
  const code = (err as { code?: unknown } | null)?.code
  span.recordException(err instanceof Error ? err : String(err))
  span.setAttribute('error.type', typeof code === 'string' ? code : err instanceof Error ? err.name : 'Error')
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) })
  return span
}

/** The context a request's `traceparent`/`tracestate` carry (the global propagator: W3C trace context). */
export function extractRequestContext(req: IncomingMessage): Context {
  return propagation.extract(ROOT_CONTEXT, req.headers)
}

/**
 * Runs `handle` inside a SERVER span for one HTTP request, continuing the caller's trace, with the
 * HTTP semantic convention attributes; the span ends when the answer is finished or the connection
 * closes, with `http.response.status_code` (ERROR status from 500 on, as the convention has it for
 * servers). `route` is the low-cardinality template (`/gate/evaluate`); `setRoute` may name it later.
 */
export function withServerSpan<T>(
  tracer: Tracer,
  req: IncomingMessage,
  res: ServerResponse,
  route: string | undefined,
  handle: (span: Span) => Promise<T>,
): Promise<T> {
  const method = req.method ?? 'GET'
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  const parent = extractRequestContext(req)
  const span = tracer.startSpan(
    route === undefined ? method : `${method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        // the path only: a query can carry a credential (gate_capability)
        'url.path': q < 0 ? url : url.slice(0, q),
        'url.scheme': (req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http',
        'network.protocol.version': req.httpVersion,
        ...(route === undefined ? {} : { 'http.route': route }),
        ...(req.socket.remoteAddress === undefined ? {} : { 'client.address': req.socket.remoteAddress }),
        ...(req.socket.localPort === undefined ? {} : { 'server.port': req.socket.localPort }),
        ...(typeof req.headers['user-agent'] === 'string' ? { 'user_agent.original': req.headers['user-agent'] } : {}),
      },
    },
    parent,
  )
  let ended = false
  const end = (): void => {
    if (ended) return
    ended = true
    if (res.headersSent) {
      span.setAttribute('http.response.status_code', res.statusCode)
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
    }
    if (!res.writableFinished) span.setAttribute('error.type', 'connection_closed')
    span.end()
  }
  res.once('finish', end)
  res.once('close', end)
  return context.with(trace.setSpan(parent, span), () => handle(span))
}

/** Names a server span after the route matched (`GET /pets/{id}`), per the HTTP convention. */
export function nameServerSpan(span: Span, method: string, route: string): void {
  span.updateName(`${method} ${route}`)
  span.setAttribute('http.route', route)
}

/** Adds `traceparent` (and `tracestate`) for the active context to a flat [name, value, ...] header list. */
export function injectTraceHeaders(headers: string[], ctx: Context = context.active()): void {
  const carrier: Record<string, string> = {}
  propagation.inject(ctx, carrier)
  for (const name of Object.keys(carrier)) {
    // the caller's own trace headers are replaced, never sent twice
    for (let i = headers.length - 2; i >= 0; i -= 2) if ((headers[i] as string).toLowerCase() === name) headers.splice(i, 2)
    headers.push(name, carrier[name] as string)
  }
}
