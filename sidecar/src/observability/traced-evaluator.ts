// The kernel as `gate api protect`'s proxy sees it when tracing is on: each evaluation in a
// `gate.evaluate` span (guards and receipt write as children) and each finalized receipt in a
// `gate.receipt.finalize` span, both under the proxy's server span (docs/observability.md, "Traces").
import { SpanKind, type Tracer } from '@opentelemetry/api'
import type { ProxyEvaluator } from '@gate/proxy'
import { markSpanError } from '@gate/sdk/server'
import type { Evaluation, Kernel } from '../kernel/kernel.js'
import { tracedEvaluation } from './evaluation-trace.js'

export function tracedEvaluator(kernel: Kernel, tracer: Tracer): ProxyEvaluator<Evaluation> {
  return {
    evaluate: input => tracedEvaluation(tracer, steps => kernel.evaluate({ ...input, trace: steps })),
    finalize: (decision, answeredStatus) =>
      tracer.startActiveSpan('gate.receipt.finalize', { kind: SpanKind.INTERNAL, attributes: { 'gate.decision_receipt.id': decision.receipt.id, 'gate.status': answeredStatus } }, async span => {
        try {
          const written = await kernel.finalize(decision, answeredStatus)
          span.setAttribute('gate.receipt.id', written.receipt.id)
          return written
        } catch (err) {
          markSpanError(span, err)
          throw err
        } finally {
          span.end()
        }
      }),
    matchRoute: (method, path) => kernel.matchRoute(method, path),
  }
}
