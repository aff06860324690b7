// The observability flags `gate sidecar`, `gate api protect` and `gate trust serve` share
// (docs/observability.md): the log's level, the decision lines' level, and metrics off.
import type { ParseArgsConfig } from 'node:util'
import type { Level } from 'pino'
import { checkControlToken } from '@gate/sdk/server'
import { UsageError } from '../errors.js'

const LOG_LEVELS: readonly Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace']

/** The parsed observability flags. */
export interface ObservabilitySettings {
  /** Serve GET /metrics and keep the counters (default true; --no-metrics). */
  metrics: boolean
  /** Log lines below this level are dropped (default info). */
  logLevel: Level
  /** The level of the one line logged per decision (default debug: off at the default log level). */
  decisionLevel: Level
  /** A bearer token that reads /metrics and nothing else (GATE_METRICS_TOKEN; never from argv). */
  scrapeToken?: string
}

export const OBSERVABILITY_DEFAULTS: Readonly<ObservabilitySettings> = Object.freeze({ metrics: true, logLevel: 'info', decisionLevel: 'debug' })

export const OBSERVABILITY_FLAG_OPTIONS = {
  'no-metrics': { type: 'boolean' },
  'log-level': { type: 'string' },
  'decision-log-level': { type: 'string' },
} as const satisfies ParseArgsConfig['options']

export const OBSERVABILITY_FLAGS_HELP = `Observability (docs/observability.md):
  --no-metrics                serve no GET /metrics and keep no counters (on by default; /metrics
                              needs the control token, or GATE_METRICS_TOKEN: a token that reads
                              /metrics and nothing else)
  --log-level LEVEL           JSON-lines log on stdout: fatal, error, warn, info, debug or trace
                              (default ${OBSERVABILITY_DEFAULTS.logLevel})
  --decision-log-level LEVEL  level of the one line logged per decision (default
                              ${OBSERVABILITY_DEFAULTS.decisionLevel}: off unless --log-level debug; info logs every decision)`

export function readObservabilityFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): ObservabilitySettings {
  const scrapeToken = env.GATE_METRICS_TOKEN === undefined || env.GATE_METRICS_TOKEN === '' ? undefined : env.GATE_METRICS_TOKEN
  // the one token rule of every Gate service (@gate/sdk/server control-token-rule.ts)
  if (scrapeToken !== undefined) checkControlToken(scrapeToken, 'GATE_METRICS_TOKEN')
  return {
    scrapeToken,
    metrics: values['no-metrics'] !== true,
    logLevel: readLevel(values['log-level'], '--log-level', OBSERVABILITY_DEFAULTS.logLevel),
    decisionLevel: readLevel(values['decision-log-level'], '--decision-log-level', OBSERVABILITY_DEFAULTS.decisionLevel),
  }
}

function readLevel(value: unknown, flag: string, fallback: Level): Level {
  if (value === undefined) return fallback
  if (!LOG_LEVELS.includes(value as Level)) throw new UsageError(`${flag} must be one of ${LOG_LEVELS.join(', ')}, got "${String(value)}"`)
  return value as Level
}
