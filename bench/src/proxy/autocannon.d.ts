// The slice of autocannon's programmatic API the proxy benchmark uses (the package ships no types).
declare module 'autocannon' {
  export interface AutocannonOptions {
    url: string
    connections?: number
    duration?: number
    method?: string
    headers?: Record<string, string>
    body?: string | Buffer
    pipelining?: number
  }
  export interface Histogram {
    average: number
    mean: number
    p50: number
    p99: number
    max: number
  }
  export interface AutocannonResult {
    requests: Histogram & { total: number }
    latency: Histogram
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>
  export default autocannon
}
