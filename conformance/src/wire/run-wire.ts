// Runs the native wire section against a kernel's wire endpoint at `unix:PATH` (`gate wire serve
// --listen unix:PATH`, or another implementation): each check on its own connection, closed after it.
import { CheckSkipped } from '../check-outcome.js'
import { resultOf, summarize, type CheckResult, type Report } from '../report.js'
import { WIRE_CHECKS } from './wire-checks.js'
import { WireProbe } from './wire-probe.js'

export interface WireRunOptions {
  /** `unix:PATH` of the endpoint. */
  target: string
  only?: readonly string[]
  /** Deadline of one exchange (default 5000 ms). */
  timeoutMs?: number
}

export async function runWireConformance(options: WireRunOptions): Promise<Report> {
  const started = Date.now()
  const timeoutMs = options.timeoutMs ?? 5000
  const results: CheckResult[] = []
  for (const check of WIRE_CHECKS) {
    if (options.only !== undefined && options.only.length > 0 && !options.only.includes(check.id)) continue
    const probes: WireProbe[] = []
    const t0 = Date.now()
    try {
      await check.run({
        connect: async () => {
          const probe = await WireProbe.open(options.target, timeoutMs)
          probes.push(probe)
          return probe
        },
      })
      results.push(resultOf(check, 'PASS', null, Date.now() - t0))
    } catch (err) {
      results.push(resultOf(check, err instanceof CheckSkipped ? 'SKIP' : 'FAIL', (err as Error).message, Date.now() - t0))
    } finally {
      for (const probe of probes) probe.close()
    }
  }
  return { sidecarUrl: `wire: ${options.target}`, spec: 'spec 03 native messages', startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, results, needs: [], ...summarize(results) }
}
