// Memory bounds for request bodies in flight, across a whole server and per connection. Each route
// limits its own body (10 MiB for /gate/evaluate), but many such bodies at once, or pipelined on one
// connection, would still add up: every byte `readBody` buffers is charged here until the answer to its
// request has gone out, and a body that would take either total past its bound is refused (503, the
// rest of it read and dropped) instead of being buffered. docs/security.md.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { GateError } from '../errors.js'

/** Bounds of a `BodyBudget`. */
export interface BodyBudgetOptions {
  /** Body bytes buffered at once across the server. Default 128 MiB. */
  maxBytes?: number
  /** Body bytes buffered at once for one connection (pipelined requests). Default 16 MiB. */
  maxBytesPerConnection?: number
}

export const BODY_BUDGET_DEFAULTS = Object.freeze({ maxBytes: 128 * 1024 * 1024, maxBytesPerConnection: 16 * 1024 * 1024 })

/** Too many body bytes in flight: try again shortly (503, `Retry-After: 1`). */
export class BodyBudgetExceededError extends GateError {
  constructor(readonly scope: 'server' | 'connection') {
    super('gate_sidecar_unavailable', `too many request body bytes in flight on this ${scope}; retry shortly`, { status: 503 })
    this.name = 'BodyBudgetExceededError'
  }
}

/** The running totals of one server. */
export interface BodyBudget {
  readonly maxBytes: number
  readonly maxBytesPerConnection: number
  /** Body bytes currently charged across the server. */
  inUse(): number
}

interface BudgetState extends BodyBudget {
  total: number
  perSocket: WeakMap<Socket, number>
}

/** A fresh budget; one per server. */
export function createBodyBudget(options: BodyBudgetOptions = {}): BodyBudget {
  const state: BudgetState = {
    maxBytes: options.maxBytes ?? BODY_BUDGET_DEFAULTS.maxBytes,
    maxBytesPerConnection: options.maxBytesPerConnection ?? BODY_BUDGET_DEFAULTS.maxBytesPerConnection,
    total: 0,
    perSocket: new WeakMap(),
    inUse: () => state.total,
  }
  return state
}

/** One request's account: what it has charged, released once when its answer is done. */
export interface BodyCharge {
  /** Charges `bytes`; returns the refusal (nothing charged) when a bound would be crossed. */
  take(bytes: number): BodyBudgetExceededError | undefined
}

const charges = new WeakMap<IncomingMessage, BodyCharge>()

/** Charges the body `readBody` buffers for `req` to `budget` until `res` closes. Call once per request. */
export function chargeBodyTo(req: IncomingMessage, res: ServerResponse, budget: BodyBudget): void {
  const state = budget as BudgetState
  const socket = req.socket
  let held = 0
  let released = false
  charges.set(req, {
    take(bytes) {
      if (released) return new BodyBudgetExceededError('server')
      const onSocket = state.perSocket.get(socket) ?? 0
      if (onSocket + bytes > state.maxBytesPerConnection) return new BodyBudgetExceededError('connection')
      if (state.total + bytes > state.maxBytes) return new BodyBudgetExceededError('server')
      if (held === 0) res.once('close', release)
      held += bytes
      state.total += bytes
      state.perSocket.set(socket, onSocket + bytes)
      return undefined
    },
  })
  function release(): void {
    released = true
    state.total -= held
    state.perSocket.set(socket, (state.perSocket.get(socket) ?? held) - held)
    held = 0
  }
}

/** The account `readBody` charges for `req`, if its server keeps one. */
export function bodyChargeOf(req: IncomingMessage): BodyCharge | undefined {
  return charges.get(req)
}
