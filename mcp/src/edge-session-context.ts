// An agent session's SessionContext (spec 02) as an edge keeps it: made when the session starts, each
// tool call counted (`request_count`, this call included) with the bytes of its request read from the
// agent and of its answer written back, measured as the JSON text of the call's arguments and of its
// result (the transport's framing aside). Each decision gets a snapshot; the kernel sets
// `delegation_depth` from the capability the call presents. Used by the MCP edges and the wire.
import type { CallerIdentity, SessionContext } from '@gate/sdk'

/** The counters of one session. */
export class EdgeSessionContext {
  readonly #base: Pick<SessionContext, 'session_id' | 'caller' | 'created_at' | 'expires_at' | 'metadata'>
  #requests = 0
  #read = 0
  #written = 0

  constructor(sessionId: string, caller: CallerIdentity, options: { now?: number; expiresAt?: number | null; metadata?: Record<string, unknown> | null } = {}) {
    this.#base = {
      session_id: sessionId,
      caller,
      created_at: options.now ?? Math.floor(Date.now() / 1000),
      expires_at: options.expiresAt ?? null,
      metadata: options.metadata ?? null,
    }
  }

  /** Counts one call and the bytes of its arguments; the snapshot its decision reads. */
  beginCall(args: unknown): SessionContext {
    this.#requests++
    this.#read += jsonBytes(args)
    return this.snapshot()
  }

  /** Counts the bytes of an answer written to the agent. */
  wrote(answer: unknown): void {
    this.#written += jsonBytes(answer)
  }

  snapshot(): SessionContext {
    return { ...this.#base, request_count: this.#requests, bytes_read: this.#read, bytes_written: this.#written, delegation_depth: 0 }
  }
}

function jsonBytes(value: unknown): number {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? 0 : Buffer.byteLength(text)
  } catch {
    return 0
  }
}
