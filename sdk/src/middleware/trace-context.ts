// W3C trace context for the call to the sidecar (docs/observability.md, "Traces"), on
// @opentelemetry/api alone: a no-op until the application registers an OpenTelemetry SDK. With an
// active span, its context is injected (the sidecar's span becomes its child); without one, the
// incoming request's own `traceparent` and `tracestate` are passed on, so the sidecar still joins the
// caller's trace.
import { context, propagation, trace } from '@opentelemetry/api'
import type { GateRequestInput } from './gate-types.js'

/** version-traceid-parentid-flags, lowercase hex (W3C Trace Context, level 1); all-zero ids are invalid. */
const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/
/** W3C: at most 32 list members, 512 characters are what a vendor must propagate. */
const MAX_TRACESTATE = 512

/** `traceparent`/`tracestate` for the sidecar call, or undefined when there is no trace to continue. */
export function traceHeaders(incoming: GateRequestInput['headers']): Record<string, string> | undefined {
  const active = context.active()
  if (trace.getSpanContext(active) !== undefined) {
    const carrier: Record<string, string> = {}
    propagation.inject(active, carrier)
    if (carrier.traceparent !== undefined) return carrier
  }
  const parent = incoming.traceparent
  if (typeof parent !== 'string' || !TRACEPARENT.test(parent.trim())) return undefined
  const state = incoming.tracestate
  const out: Record<string, string> = { traceparent: parent.trim() }
  if (typeof state === 'string' && state.length <= MAX_TRACESTATE && state.trim() !== '') out.tracestate = state.trim()
  return out
}
