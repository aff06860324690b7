// The JSON-lines log of a Gate service (pino): one object per line on stdout with `level` as a word,
// an ISO `time`, the `service` and a human `msg` ("listening on URL" stays readable and greppable).
// Nothing here ever receives a request's headers, body, token or caller identity: callers pass
// messages and the fields they choose (docs/observability.md lists them).
import { pino, type Level, type Logger } from 'pino'

export type { Logger } from 'pino'

/** Creates the logger of one service, writing synchronously to stdout (no line is lost on exit). */
export function createGateLogger(service: string, level: Level, destination: pino.DestinationStream = pino.destination({ dest: 1, sync: true })): Logger {
  return pino(
    {
      level,
      base: { service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: label => ({ level: label }) },
    },
    destination,
  )
}

/**
 * The `log(line)` function the stores and wiring take, over a logger: a line starting "warning:" is
 * logged at warn, "error:" at error, the rest at info; the prefix stays in the message.
 */
export function lineLogger(logger: Logger): (line: string) => void {
  return line => {
    if (line.startsWith('warning:')) logger.warn(line)
    else if (line.startsWith('error:')) logger.error(line)
    else logger.info(line)
  }
}

/** An error as log fields: its code, message and the chain of causes (never a request's content). */
export function errorFields(err: unknown): { err: { type: string; code?: string; message: string; causes?: string[] } } {
  const e = err instanceof Error ? err : new Error(String(err))
  const causes: string[] = []
  let cause = e.cause
  while (cause !== undefined && causes.length < 5) {
    causes.push(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause))
    cause = cause instanceof Error ? cause.cause : undefined
  }
  const code = (e as { code?: unknown }).code
  return { err: { type: e.name, ...(typeof code === 'string' ? { code } : {}), message: e.message, ...(causes.length > 0 ? { causes } : {}) } }
}
