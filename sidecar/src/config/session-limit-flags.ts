// The session limit flags of the services with agent sessions (`gate mcp serve`, `gate mcp serve-http`,
// `gate wire serve`, `gate run`): what SessionLimitGuard (kernel/guards/session-limit.ts) enforces on
// each session's SessionContext (spec 02). Unset, a limit is not enforced.
import type { ParseArgsConfig } from 'node:util'
import { UsageError } from '../errors.js'
import type { SessionLimits } from '../kernel/guards/session-limit.js'

export type { SessionLimits }

export const SESSION_LIMIT_FLAG_OPTIONS = {
  'max-session-calls': { type: 'string' },
  'max-delegation-depth': { type: 'string' },
} as const satisfies ParseArgsConfig['options']

export const SESSION_LIMIT_FLAGS_HELP = `  --max-session-calls N       deny a session's tool calls after its first N (SessionContext request_count;
                              a new session starts from zero); default: no limit
  --max-delegation-depth N    deny a call presenting a capability delegated more than N times
                              (SessionContext delegation_depth; 0: direct grants only); default: no limit`


/** Reads the session limit flags. */
export function readSessionLimits(values: Record<string, unknown>): SessionLimits {
  return {
    maxCalls: limit(values['max-session-calls'], '--max-session-calls', 1),
    maxDelegationDepth: limit(values['max-delegation-depth'], '--max-delegation-depth', 0),
  }
}

function limit(value: unknown, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`${flag} must be an integer of at least ${min}, got "${String(value)}"`)
  }
  return n
}
