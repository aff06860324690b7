// The spans of one evaluation (docs/observability.md, "Traces"): the evaluation span is the parent,
// `gate.guards` and `gate.receipt.write` (signing and the group commit) its children. Only built when
// a tracer is configured; the kernel sees it through its EvaluationTrace port.
import { context, SpanKind, trace, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { GuardEvidence, Verdict } from '@gate/sdk'
import { markSpanError } from '@gate/sdk/server'
import type { Evaluation, EvaluationTrace } from '../kernel/kernel.js'
import { reasonLabel } from './metrics.js'

export class SpanEvaluationTrace implements EvaluationTrace {
  readonly traceId: string
  readonly #tracer: Tracer
  readonly #context: Context
  #guards: Span | undefined
  #write: Span | undefined

  /** `parent`: the evaluation span, whose children the steps become. */
  constructor(tracer: Tracer, parent: Span, parentContext: Context) {
    this.#tracer = tracer
    this.#context = trace.setSpan(parentContext, parent)
    this.traceId = parent.spanContext().traceId
  }

  guardsStarted(): void {
    this.#guards = this.#tracer.startSpan('gate.guards', { kind: SpanKind.INTERNAL }, this.#context)
  }

  guardsEnded(verdict: Verdict, evidence: readonly GuardEvidence[]): void {
    const span = this.#guards
    if (span === undefined) return
    this.#guards = undefined
    // one event per guard that ran, in order: which one decided is what the on-call reader wants
    for (const e of evidence) span.addEvent('gate.guard', { 'gate.guard.name': e.guard_name, 'gate.guard.passed': e.verdict })
    span.setAttribute('gate.verdict', verdict.verdict)
    if (verdict.verdict === 'deny') span.setAttribute('gate.guard.denied_by', verdict.guard)
    span.end()
  }

  writeStarted(): void {
    this.#write = this.#tracer.startSpan('gate.receipt.write', { kind: SpanKind.INTERNAL }, this.#context)
  }

  writeEnded(receiptId: string): void {
    const span = this.#write
    if (span === undefined) return
    this.#write = undefined
    span.setAttribute('gate.receipt.id', receiptId)
    span.end()
  }

  /** Ends a step left open by a failure, marked as the error. */
  fail(err: unknown): void {
    for (const span of [this.#guards, this.#write]) if (span !== undefined) markSpanError(span, err).end()
    this.#guards = undefined
    this.#write = undefined
  }
}

/** The evaluation's outcome on its span: verdict, reason, route and the receipt that records it. */
export function recordEvaluation(span: Span, evaluation: Pick<Evaluation, 'verdict' | 'receipt' | 'status'>): void {
  span.setAttributes({
    'gate.receipt.id': evaluation.receipt.id,
    'gate.request_id': evaluation.receipt.request_id,
    'gate.verdict': evaluation.verdict.verdict,
    'gate.reason_code': reasonLabel(evaluation.verdict),
    'gate.route': evaluation.receipt.route_pattern,
    'gate.request.method': evaluation.receipt.method,
    'gate.status': evaluation.status,
  })
}

/**
 * Runs one evaluation inside an INTERNAL `gate.evaluate` span under the active context (the proxy's
 * server span, the MCP edge's tool-call span), recording its outcome or failure.
 */
export async function tracedEvaluation<E>(tracer: Tracer, run: (trace: SpanEvaluationTrace) => Promise<E>, record: (span: Span, evaluation: E) => void): Promise<E> {
  const parent = context.active()
  const span = tracer.startSpan('gate.evaluate', { kind: SpanKind.INTERNAL }, parent)
  const steps = new SpanEvaluationTrace(tracer, span, parent)
  try {
    const evaluation = await context.with(trace.setSpan(parent, span), () => run(steps))
    record(span, evaluation)
    return evaluation
  } catch (err) {
    steps.fail(err)
    markSpanError(span, err)
    throw err
  } finally {
    span.end()
  }
}
