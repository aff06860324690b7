// The kernel as its callers see it when tracing is on (docs/observability.md, "Traces"): for
// `gate api protect`'s proxy, each evaluation in a `gate.evaluate` span (guards and receipt write as
// children) and each finalized receipt in a `gate.receipt.finalize` span, under the proxy's server
// span; for the MCP edges, each tool-call decision in a `gate.evaluate` span under the tools/call span.
import { SpanKind, type Tracer } from '@opentelemetry/api'
import type { ProxyEvaluator } from '@gate/proxy'
import { markSpanError } from '@gate/sdk/server'
import type { Evaluation, Kernel } from '../kernel/kernel.js'
import type { RouteMatch } from '@gate/openapi'
import type { ToolCallDecision, ToolCallKernel } from '../kernel/tool-call-kernel.js'
import type { ToolCallDecider } from '@gate/mcp'
import { recordEvaluation, tracedEvaluation } from './evaluation-trace.js'
import { reasonLabel } from './metrics.js'

export function tracedEvaluator(kernel: Kernel, tracer: Tracer): ProxyEvaluator<Evaluation, RouteMatch> {
  return {
    evaluate: input => tracedEvaluation(tracer, steps => kernel.evaluate({ ...input, trace: steps }), recordEvaluation),
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

/** The tool-call path as the MCP edges see it when tracing is on: each decision in a `gate.evaluate` span. */
export function tracedDecider(decider: ToolCallKernel, tracer: Tracer): ToolCallDecider<ToolCallDecision> {
  return {
    decide: input =>
      tracedEvaluation(tracer, steps => decider.decide({ ...input, trace: steps }), (span, decision) =>
        span.setAttributes({
          'gate.receipt.id': decision.receipt.id,
          'gate.request_id': decision.requestId,
          'gate.verdict': decision.verdict.verdict,
          'gate.reason_code': reasonLabel(decision.verdict),
          'gate.tool_server': input.serverId,
          'gen_ai.tool.name': input.tool,
        }),
      ),
    finish: (decision, ending) => decider.finish(decision, ending),
    recordRelayed: record => decider.recordRelayed(record),
  }
}
