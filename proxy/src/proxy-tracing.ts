// The proxy's spans when `gate api protect` runs with tracing on (docs/observability.md, "Traces"): a
// SERVER span per proxied request (named after the matched route) and a CLIENT span for the hop to
// the upstream, whose context goes upstream in `traceparent`. The evaluation's own span comes from
// the evaluator the service wires in. Never called with tracing off.
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api'
import { injectTraceHeaders, markSpanError } from '@gate/sdk/server'
import type { UpstreamTarget } from './upstream-url.js'
import type { RelayOutcome } from './upstream-client.js'

/** The CLIENT span of one upstream exchange. */
export interface UpstreamSpan {
  /** The upstream's status line arrived. */
  head(statusCode: number): void
  /** The exchange ended (relayed, cut, failed or dropped). */
  end(outcome: RelayOutcome): void
}

/**
 * Starts the CLIENT span under the active (server) span and puts its `traceparent` into `headers`,
 * replacing the caller's: the upstream's spans become children of this hop.
 */
export function startUpstreamSpan(tracer: Tracer, upstream: UpstreamTarget, method: string, path: string, headers: string[]): UpstreamSpan {
  const url = new URL(upstream.origin)
  const q = path.indexOf('?')
  const parent = context.active()
  const span: Span = tracer.startSpan(
    method,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': method,
        'server.address': url.hostname,
        'server.port': url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
        // no query: it may carry what the upstream treats as a credential
        'url.full': `${upstream.origin}${q < 0 ? path : path.slice(0, q)}`,
      },
    },
    parent,
  )
  injectTraceHeaders(headers, trace.setSpan(parent, span))
  return {
    head(statusCode) {
      span.setAttribute('http.response.status_code', statusCode)
      // a client span is an error from 400 on (HTTP semantic conventions)
      if (statusCode >= 400) span.setStatus({ code: SpanStatusCode.ERROR })
    },
    end(outcome) {
      if (outcome.kind === 'failed' || outcome.kind === 'cut') markSpanError(span, outcome.error)
      span.end()
    },
  }
}
