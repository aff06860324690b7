// Open-loop load at a fixed rate, for latency-at-load measurements. autocannon's `overallRate` is not
// that: each connection sends back-to-back until it has made its share of the second, then waits for the
// next second, so "1,000 req/s" is a burst at saturation followed by silence, and the latency it reports
// is queueing at saturation. Here request i leaves at start + i / rate (or as soon after as the timer
// allows), whatever happened to earlier ones; a request that finds every connection busy waits in the
// pool, and that wait counts in its latency. Loopback only, bounded by duration.
import { Pool } from 'undici'

export interface PacedLoadOptions {
  /** Origin, e.g. http://127.0.0.1:8080 (loopback only). */
  origin: string
  path: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  /** A fresh body per request (for request ids that must not repeat). */
  body?: () => string
  rate: number
  seconds: number
  /** Keep-alive connections, default 32. */
  connections?: number
}

export interface PacedLoadResult {
  /** Latency of each 2xx answer in milliseconds, from the request leaving to the whole body read. */
  latencies: number[]
  sent: number
  failures: number
  /** Requests per second actually answered. */
  achievedRate: number
}

export async function pacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const origin = new URL(options.origin)
  if (origin.hostname !== '127.0.0.1') throw new Error(`benchmarks only load loopback, not ${origin.hostname}`)
  const pool = new Pool(origin.origin, { connections: options.connections ?? 32, pipelining: 1, keepAliveTimeout: 30_000 })
  const latencies: number[] = []
  let failures = 0
  let sent = 0
  const total = Math.round(options.rate * options.seconds)
  const intervalNs = 1e9 / options.rate
  const pending: Promise<void>[] = []
  const one = async (): Promise<void> => {
    const started = process.hrtime.bigint()
    try {
      const res = await pool.request({
        path: options.path,
        method: options.method ?? 'GET',
        headers: options.headers,
        ...(options.body === undefined ? {} : { body: options.body() }),
      })
      await res.body.dump()
      if (res.statusCode >= 200 && res.statusCode < 300) latencies.push(Number(process.hrtime.bigint() - started) / 1e6)
      else failures++
    } catch {
      failures++
    }
  }
  const start = process.hrtime.bigint()
  await new Promise<void>(resolve => {
    const tick = () => {
      const due = Math.min(total, Math.floor(Number(process.hrtime.bigint() - start) / intervalNs) + 1)
      while (sent < due) {
        sent++
        pending.push(one())
      }
      if (sent >= total) resolve()
      else setTimeout(tick, 0)
    }
    tick()
  })
  await Promise.all(pending)
  const elapsedSeconds = Number(process.hrtime.bigint() - start) / 1e9
  await pool.close()
  return { latencies, sent, failures, achievedRate: latencies.length / elapsedSeconds }
}
