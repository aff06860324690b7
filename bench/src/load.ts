// Closed-loop load (saturation) for the HTTP benchmarks: autocannon, loopback only, bounded duration.
// Latency at a fixed rate is paced-load.ts.
import autocannon from 'autocannon'

export interface LoadOptions {
  url: string
  method?: 'GET' | 'POST'
  body?: string
  headers?: Record<string, string>
  connections?: number
  durationSeconds?: number
}

export interface LoadResult {
  requestsPerSecond: number
  /** Requests answered over the whole run. */
  requests: number
  p50Ms: number
  p99Ms: number
  non2xx: number
  errors: number
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url)
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') throw new Error(`benchmarks only load loopback, not ${url.hostname}`)
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    body: options.body,
    headers: options.headers,
    connections: options.connections ?? 50,
    duration: options.durationSeconds ?? 5,
  })
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  }
}
