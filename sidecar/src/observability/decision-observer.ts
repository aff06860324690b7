// The kernel's observer: every decision counted in the metrics and written as one log line, every
// failed evaluation counted by code and logged as an error. The log line names the request id, route
// pattern, verdict, reason code, receipt id and latency, and the caller only by its identity hash
// (the receipt's own field): never a token, header, cookie or the identity itself.
import type { Level } from 'pino'
import type { KernelObserver } from '../kernel/kernel.js'
import { createDecisionLog } from './decision-log.js'
import { errorFields, type Logger } from './logger.js'
import { UNMATCHED_ROUTE, type GateMetrics } from './metrics.js'

export interface DecisionObserverOptions {
  metrics?: GateMetrics
  logger: Logger
  decisionLevel: Level
}

/** Creates the observer, or undefined when there is nothing to observe for (no metrics, decision lines off). */
export function createDecisionObserver(options: DecisionObserverOptions): KernelObserver | undefined {
  const { metrics, logger, decisionLevel } = options
  const decisionLog = logger.isLevelEnabled(decisionLevel) ? createDecisionLog(logger, decisionLevel) : undefined
  if (metrics === undefined && decisionLog === undefined) {
    // failures are still worth a line: they answer 500
    return { onDecision() {}, onFailure: (err, request) => logFailure(logger, err, request.request_id) }
  }
  return {
    onDecision(evaluation, route, durationSeconds) {
      const routeLabel = route.matched ? route.pattern : UNMATCHED_ROUTE
      metrics?.recordDecision(evaluation.verdict, routeLabel, evaluation.receipt.method, durationSeconds)
      decisionLog?.(evaluation, routeLabel, durationSeconds)
    },
    onFailure(err, request) {
      metrics?.recordEvaluationFailure(errorCode(err))
      logFailure(logger, err, request.request_id)
    },
  }
}

function logFailure(logger: Logger, err: unknown, requestId: string): void {
  logger.error({ event: 'evaluation_failed', request_id: requestId, ...errorFields(err) }, 'evaluation failed (answered 500, fail closed)')
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('gate_') ? code : 'gate_evaluation_failed'
}
