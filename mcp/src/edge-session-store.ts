// What the hosted edge keeps about its sessions (spec 03, "States and transitions" and "Events"): one
// record per session and the session's retained notification window. The sidecar's SQLite store
// (beside the receipt store) satisfies EdgeSessionStore, so a restarted edge resumes a live session;
// MemoryEdgeSessionStore serves `--allow-ephemeral-receipts` and tests. Capability tokens and admission
// credentials are never kept here: a session names its admitted principal by a hash.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/** Spec 03's hosted session states. */
export type HostedSessionState = 'initializing' | 'ready' | 'draining' | 'deleted' | 'expired' | 'closed'

/** The states a request never resumes: the client must initialize again. */
export const ENDED_STATES: ReadonlySet<HostedSessionState> = new Set(['deleted', 'expired', 'closed'])

export interface EdgeSessionRecord {
  id: string
  state: HostedSessionState
  /** The protocol version bound at initialize. */
  protocolVersion: string
  /** Who was admitted (a hash of the bearer token, or the JWT's issuer and subject): only they may use the session. */
  principal: string
  clientInfo: { name: string; version: string }
  clientCapabilities: Record<string, unknown>
  /** Unix milliseconds. */
  createdAt: number
  lastActiveAt: number
}

/** One retained event of a session: its SSE id is `{session_id}-{sequence}`. */
export interface EdgeEvent {
  sessionId: string
  sequence: number
  /** The SDK transport's stream the event was sent on (a request's POST stream, or the GET stream). */
  streamId: string
  message: JSONRPCMessage | Record<string, never>
}

export interface EdgeSessionStore {
  /** Creates or replaces a record. */
  put(record: EdgeSessionRecord): Promise<void>
  get(id: string): Promise<EdgeSessionRecord | undefined>
  /** Every record, newest first, at most `limit`. */
  list(limit: number): Promise<EdgeSessionRecord[]>
  /** Appends events (in one transaction) and drops each session's events more than `window` sequences older than its last. */
  appendEvents(events: readonly EdgeEvent[], window: number): Promise<void>
  /** The retained events of a session after `sequence`, in order. */
  eventsAfter(sessionId: string, sequence: number): Promise<EdgeEvent[]>
  /** The lowest and highest retained sequence of a session (0 and 0 when none). */
  sequenceRange(sessionId: string): Promise<{ first: number; last: number }>
  /** Drops a session's events (it ended). */
  dropEvents(sessionId: string): Promise<void>
  /** Deletes records that ended (or went idle) before `before` (Unix ms); returns how many. */
  prune(before: number): Promise<number>
  close(): Promise<void>
}

/** The in-process store: lost on restart. At most `maxEnded` ended records are kept (oldest go first). */
export class MemoryEdgeSessionStore implements EdgeSessionStore {
  readonly #records = new Map<string, EdgeSessionRecord>()
  readonly #events = new Map<string, EdgeEvent[]>()
  readonly #ended = new Set<string>()
  readonly #maxEnded: number

  constructor(options: { maxEnded?: number } = {}) {
    this.#maxEnded = options.maxEnded ?? 10_000
  }

  async put(record: EdgeSessionRecord): Promise<void> {
    this.#records.set(record.id, { ...record })
    if (!ENDED_STATES.has(record.state)) return
    this.#ended.add(record.id)
    for (const id of this.#ended) {
      if (this.#ended.size <= this.#maxEnded) break
      this.#ended.delete(id)
      this.#records.delete(id)
      this.#events.delete(id)
    }
  }

  async get(id: string): Promise<EdgeSessionRecord | undefined> {
    const record = this.#records.get(id)
    return record === undefined ? undefined : { ...record }
  }

  async list(limit: number): Promise<EdgeSessionRecord[]> {
    return [...this.#records.values()].sort((a, b) => b.createdAt - a.createdAt).slice(0, limit).map(r => ({ ...r }))
  }

  async appendEvents(batch: readonly EdgeEvent[], window: number): Promise<void> {
    for (const event of batch) {
      let events = this.#events.get(event.sessionId)
      if (events === undefined) this.#events.set(event.sessionId, (events = []))
      events.push(event)
      const floor = event.sequence - window
      while (events.length > 0 && events[0]!.sequence <= floor) events.shift()
    }
  }

  async eventsAfter(sessionId: string, sequence: number): Promise<EdgeEvent[]> {
    return (this.#events.get(sessionId) ?? []).filter(e => e.sequence > sequence)
  }

  async sequenceRange(sessionId: string): Promise<{ first: number; last: number }> {
    const events = this.#events.get(sessionId) ?? []
    return events.length === 0 ? { first: 0, last: 0 } : { first: events[0]!.sequence, last: events[events.length - 1]!.sequence }
  }

  async dropEvents(sessionId: string): Promise<void> {
    this.#events.delete(sessionId)
  }

  async prune(before: number): Promise<number> {
    let count = 0
    for (const [id, record] of this.#records) {
      if (record.lastActiveAt < before) {
        this.#records.delete(id)
        this.#ended.delete(id)
        this.#events.delete(id)
        count++
      }
    }
    return count
  }

  async close(): Promise<void> {}
}
