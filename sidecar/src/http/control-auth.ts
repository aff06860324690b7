// Authentication of the control routes (/approvals, /v1): a bearer token compared in constant time
// when one is configured; without one, only loopback callers are admitted (docs/security.md), and every
// caller of a service on a Unix socket (the socket is 0600: its peers run as the service's own user).
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { bearerToken } from '@gate/sdk/server'

export type ControlAuthResult = { ok: true } | { ok: false; status: 401 | 403; message: string }

export interface ControlAuth {
  check(req: IncomingMessage): ControlAuthResult
}

/** Creates the control-route check. `token` undefined means local callers only (loopback, or the Unix socket). */
export function createControlAuth(token: string | undefined, options: { unixSocket?: boolean } = {}): ControlAuth {
  const expected = token === undefined ? undefined : digest(token)
  return {
    check(req) {
      if (expected === undefined) {
        return options.unixSocket === true || isLoopback(req.socket.remoteAddress)
          ? { ok: true }
          : { ok: false, status: 403, message: 'control routes accept only loopback callers when no control token is configured' }
      }
      const presented = bearerToken(req)
      // Hash both sides so the comparison is constant-time whatever the lengths (never `===` here).
      if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
        return { ok: false, status: 401, message: 'missing or invalid bearer token' }
      }
      return { ok: true }
    },
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest()
}

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.')
}
