// The timeouts of every Gate listener (gate sidecar, gate api protect, gate trust serve), set on
// purpose rather than left to node:http's defaults: a client that trickles its headers (slowloris) is
// cut after `headersTimeoutMs`, one that trickles a body after `requestTimeoutMs`, an idle keep-alive
// connection after `keepAliveTimeoutMs`, and a connection where nothing moves at all for
// `socketIdleTimeoutMs` (a client that stops reading its answer). node:http checks the first two only
// every `connectionsCheckingInterval` (30 s by default, which let slowloris connections live ~50 s);
// here it checks four times per headers timeout, at most every second. docs/security.md.
import type { ParseArgsConfig } from 'node:util'
import { UsageError } from '../errors.js'

export interface ListenerTimeouts {
  /** Until the whole request head has arrived. Default 10,000. */
  headersTimeoutMs: number
  /** Until the whole request, head and body, has arrived. Default 60,000. */
  requestTimeoutMs: number
  /** How long an idle keep-alive connection is kept between requests. Default 10,000. */
  keepAliveTimeoutMs: number
  /** No byte in either direction for this long closes the connection. Default 120,000. */
  socketIdleTimeoutMs: number
}

export const LISTENER_TIMEOUT_DEFAULTS: Readonly<ListenerTimeouts> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 10_000,
  socketIdleTimeoutMs: 120_000,
})

export const LISTENER_TIMEOUT_FLAG_OPTIONS = {
  'headers-timeout-secs': { type: 'string' },
  'request-timeout-secs': { type: 'string' },
  'keep-alive-timeout-secs': { type: 'string' },
} as const satisfies ParseArgsConfig['options']

export const LISTENER_TIMEOUT_FLAGS_HELP = `  --headers-timeout-secs N    a request's head must arrive within N seconds (default 10)
  --request-timeout-secs N    the whole request must arrive within N seconds (default 60)
  --keep-alive-timeout-secs N idle keep-alive connections close after N seconds (default 10)`

/** The timeouts from the flags above (whole seconds, 1 to 3600), defaults for the others. */
export function readListenerTimeouts(values: Record<string, unknown>): ListenerTimeouts {
  const secs = (flag: string, fallbackMs: number): number => {
    const value = values[flag]
    if (value === undefined) return fallbackMs
    if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 3600) {
      throw new UsageError(`--${flag} must be a whole number of seconds from 1 to 3600, got "${String(value)}"`)
    }
    return Number(value) * 1000
  }
  const timeouts = {
    headersTimeoutMs: secs('headers-timeout-secs', LISTENER_TIMEOUT_DEFAULTS.headersTimeoutMs),
    requestTimeoutMs: secs('request-timeout-secs', LISTENER_TIMEOUT_DEFAULTS.requestTimeoutMs),
    keepAliveTimeoutMs: secs('keep-alive-timeout-secs', LISTENER_TIMEOUT_DEFAULTS.keepAliveTimeoutMs),
    socketIdleTimeoutMs: LISTENER_TIMEOUT_DEFAULTS.socketIdleTimeoutMs,
  }
  // node:http refuses a headers timeout longer than the request timeout
  if (timeouts.headersTimeoutMs > timeouts.requestTimeoutMs) {
    throw new UsageError(`--headers-timeout-secs (${timeouts.headersTimeoutMs / 1000}) must not exceed --request-timeout-secs (${timeouts.requestTimeoutMs / 1000})`)
  }
  return timeouts
}
