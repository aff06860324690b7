// The decision log line (docs/observability.md): one JSON line per decision, byte for byte the line
// pino would write (its level word, ISO time, the service's bindings, the fields, "msg"), formatted
// directly from the decision instead of through an object pino walks, and written to pino's own
// destination once per event-loop turn for all the lines of that turn: a synchronous write(2) per
// decision was most of what the line cost under load. Whatever is pending is written at exit too.
import { pino, type Level, type Logger } from 'pino'
import type { Evaluation } from '../kernel/kernel.js'
import { reasonLabel } from './metrics.js'

/** Writes the line of one decision: `route` is its pattern or "unmatched". */
export type DecisionLog = (evaluation: Evaluation, route: string, durationSeconds: number) => void

/** Creates the writer of decision lines at `level` on `logger`'s destination. */
export function createDecisionLog(logger: Logger, level: Level): DecisionLog {
  const stream = (logger as unknown as Record<symbol, { write(text: string): unknown }>)[pino.symbols.streamSym]!
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? ''
  const head = `{"level":${JSON.stringify(level)},"time":"`
  let pending = ''
  let scheduled = false
  // the ISO time of the current millisecond, made once per millisecond rather than per line
  let timeMs = -1
  let timeText = ''
  const flush = () => {
    scheduled = false
    if (pending === '') return
    const text = pending
    pending = ''
    stream.write(text)
  }
  process.once('exit', flush)
  return (evaluation, route, durationSeconds) => {
    const receipt = evaluation.receipt
    const now = Date.now()
    if (now !== timeMs) {
      timeMs = now
      timeText = new Date(now).toISOString()
    }
    // the values a client or a spec chose (request id, route, reason) are JSON-escaped; the rest are
    // numbers, hex or the kernel's own words
    pending +=
      `${head}${timeText}"${bindings},"event":"decision","request_id":${JSON.stringify(receipt.request_id)},"method":${JSON.stringify(receipt.method)},` +
      `"route":${JSON.stringify(route)},"verdict":"${evaluation.verdict.verdict}","reason_code":${JSON.stringify(reasonLabel(evaluation.verdict))},"status":${evaluation.status},` +
      `"receipt_id":"${receipt.id}","caller_identity_hash":"${receipt.caller_identity_hash}","latency_ms":${Math.round(durationSeconds * 1e6) / 1000},"msg":"decision"}\n`
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}
