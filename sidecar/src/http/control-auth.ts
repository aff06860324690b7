// Authentication with the control token (config/control-token.ts): a bearer token compared in constant
// time. The control routes (/approvals, /v1) always need it; /gate/evaluate needs it only for what an
// authenticated caller may ask (a `capability_id` lookup), and refuses a wrong one (docs/security.md).
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { bearerToken } from '@gate/sdk/server'

export type ControlAuthResult = { ok: true } | { ok: false; status: 401; message: string }

/** What a request presented: no Authorization header, the control token, or anything else. */
export type PresentedCredential = 'absent' | 'valid' | 'invalid'

export interface ControlAuth {
  /** The control routes: the control token, or a 401. */
  check(req: IncomingMessage): ControlAuthResult
  /** What the request's Authorization header holds, compared with the control token. */
  presented(req: IncomingMessage): PresentedCredential
}

export const CONTROL_UNAUTHORIZED_MESSAGE = 'missing or invalid bearer token (the control token: GATE_CONTROL_TOKEN, --control-token or the control token file the process printed at start)'

/** Creates the check for `token` (already validated by the one token rule). */
export function createControlAuth(token: string): ControlAuth {
  const expected = digest(token)
  const presented = (req: IncomingMessage): PresentedCredential => {
    if (req.headers.authorization === undefined) return 'absent'
    const candidate = bearerToken(req)
    // Hash both sides so the comparison is constant-time whatever the lengths (never `===` here).
    return candidate !== undefined && timingSafeEqual(digest(candidate), expected) ? 'valid' : 'invalid'
  }
  return {
    presented,
    check(req) {
      return presented(req) === 'valid' ? { ok: true } : { ok: false, status: 401, message: CONTROL_UNAUTHORIZED_MESSAGE }
    },
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest()
}
