// The kernel's end of the native wire (docs/wire.md): it takes connected transports (a Unix socket, or
// a TLS socket whose client certificate was verified) from whoever listens (`gate run`, `gate wire
// serve`), runs a WireSession on each, and pushes revocations to every session holding the revoked
// capability. Closing it cancels every call in flight, answering each, then ends every transport.
import { uuidv7, type CallerIdentity } from '@gate/sdk'
import { InputCheck } from '@gate/mcp'
import type { Duplex } from 'node:stream'
import type { RevocationEvents, WireDecider } from './ports.js'
import type { ToolServerSet } from './tool-server-set.js'
import { WireConfigError } from './errors.js'
import { WireSession, type SessionContext } from './wire-session.js'

/** Options of `WireEndpoint`, with their defaults in WIRE_ENDPOINT_DEFAULTS. */
export interface WireEndpointOptions {
  decider: WireDecider
  toolServers: ToolServerSet
  /** Where revocations come from; without it, a revoked capability fails its next call only. */
  revocations?: RevocationEvents
  /** The control routes' base URL, named in a pending approval's reason. */
  controlUrl?: string
  log: (line: string) => void
  /** Calls in flight on one connection before Gate stops reading it (default 64). */
  maxInFlight?: number
  /** Bytes queued for an agent that does not read before its connection is closed (default 64 MiB). */
  maxQueuedBytes?: number
}

export const WIRE_ENDPOINT_DEFAULTS = Object.freeze({ maxInFlight: 64, maxQueuedBytes: 64 * 1024 * 1024 })

export class WireEndpoint {
  readonly #ctx: SessionContext
  readonly #sessions = new Set<WireSession>()
  readonly #unsubscribe: (() => void) | undefined
  #closing = false

  constructor(options: WireEndpointOptions) {
    this.#ctx = {
      decider: options.decider,
      toolServers: options.toolServers,
      inputs: new InputCheck(),
      controlUrl: options.controlUrl,
      log: options.log,
      maxInFlight: positive(options.maxInFlight, 'maxInFlight') ?? WIRE_ENDPOINT_DEFAULTS.maxInFlight,
      maxQueuedBytes: positive(options.maxQueuedBytes, 'maxQueuedBytes') ?? WIRE_ENDPOINT_DEFAULTS.maxQueuedBytes,
    }
    this.#unsubscribe = options.revocations?.onRevoked(id => {
      for (const session of this.#sessions) session.revoked(id)
    })
  }

  /** Sessions open now. */
  get connections(): number {
    return this.#sessions.size
  }

  /** Serves one connected transport; `caller` is who it is (anonymous on a Unix socket, the certificate on mTLS). */
  accept(socket: Duplex, caller: CallerIdentity): void {
    if (this.#closing) {
      socket.destroy()
      return
    }
    const session = new WireSession(socket, `wire_${uuidv7()}`, caller, this.#ctx)
    this.#sessions.add(session)
    void session.closed.then(() => this.#sessions.delete(session))
  }

  /** Stops: every call in flight is cancelled with `reason` (receipted and answered), every transport ended. */
  async close(reason: string): Promise<void> {
    this.#closing = true
    this.#unsubscribe?.()
    await Promise.all([...this.#sessions].map(s => s.close(reason)))
  }
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  if (!Number.isSafeInteger(value) || value < 1) throw new WireConfigError(`${name} must be a positive integer, got ${String(value)}`)
  return value
}
