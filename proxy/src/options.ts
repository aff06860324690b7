// ProxyOptions: validated once at construction (STYLE, Options), defaults merged once, and the fully
// resolved object passed inward.
import { InvalidConfigError } from '@gate/sdk'
import { parseUpstreamUrl, type UpstreamTarget } from './upstream-url.js'

export interface ProxyOptions {
  /** Upstream base URL (http or https); its path is kept as a prefix. Required. */
  upstream: string
  /** Wall-clock ceiling of one upstream hop, including reading the whole response. Default 20000. */
  upstreamTimeoutMs?: number
  /** Largest request body the proxy reads. Default 10 MiB (spec 01, Limits). */
  maxBodyBytes?: number
  /** Most keep-alive connections to the upstream. Default 256. */
  upstreamConnections?: number
}

export const DEFAULTS = Object.freeze({
  upstreamTimeoutMs: 20_000,
  maxBodyBytes: 10 * 1024 * 1024,
  upstreamConnections: 256,
})

export interface ResolvedProxyOptions {
  upstream: UpstreamTarget
  upstreamTimeoutMs: number
  maxBodyBytes: number
  upstreamConnections: number
}

const KNOWN = new Set(['upstream', 'upstreamTimeoutMs', 'maxBodyBytes', 'upstreamConnections'])

/** Checks every option (throws a GateError naming it) and merges the defaults. */
export function resolveProxyOptions(options: ProxyOptions): ResolvedProxyOptions {
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new InvalidConfigError(`ProxyOptions.${key}`, `one of ${[...KNOWN].join(', ')}`, key)
  }
  if (typeof options.upstream !== 'string') throw new InvalidConfigError('upstream', 'an http(s) URL string', options.upstream)
  return {
    upstream: parseUpstreamUrl(options.upstream),
    upstreamTimeoutMs: positiveInt('upstreamTimeoutMs', options.upstreamTimeoutMs, DEFAULTS.upstreamTimeoutMs),
    maxBodyBytes: positiveInt('maxBodyBytes', options.maxBodyBytes, DEFAULTS.maxBodyBytes),
    upstreamConnections: positiveInt('upstreamConnections', options.upstreamConnections, DEFAULTS.upstreamConnections),
  }
}

function positiveInt(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new InvalidConfigError(name, 'a positive integer', value)
  return value
}
