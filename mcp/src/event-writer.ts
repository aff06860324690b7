// Writes the hosted edge's session events to the edge-session store behind the answers, in batches:
// one transaction for every event of every session that arrived within `delayMs`, instead of a
// transaction per event (two per tools/call: its stream's priming event and its answer). Measured on
// `gate mcp serve-http` (10 sessions, sqlite3 driver): the per-event writes cost the event loop about
// 0.95 ms per call, the largest item of its budget (docs/performance.md). The events a replay needs
// soon are kept in memory by each session (session-events.ts); what is not yet written when the process
// is killed is lost to a replay after the restart (the client initializes again, 409), never a receipt.
import type { EdgeEvent, EdgeSessionStore } from './edge-session-store.js'

export class EventWriter {
  readonly #store: EdgeSessionStore
  readonly #window: number
  readonly #delayMs: number
  readonly #log: (line: string) => void
  #pending: EdgeEvent[] = []
  #timer: NodeJS.Timeout | undefined
  #written: Promise<void> = Promise.resolve()

  constructor(store: EdgeSessionStore, window: number, log: (line: string) => void, delayMs = 20) {
    this.#store = store
    this.#window = window
    this.#log = log
    this.#delayMs = delayMs
  }

  add(event: EdgeEvent): void {
    this.#pending.push(event)
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => void this.flush(), this.#delayMs)
      this.#timer.unref()
    }
  }

  /** Writes what is pending; resolves once everything added so far is written (or failed, logged). */
  flush(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const batch = this.#pending
    if (batch.length > 0) {
      this.#pending = []
      this.#written = this.#written.then(() => this.#store.appendEvents(batch, this.#window)).catch(err => this.#log(`session events: ${batch.length} not written: ${(err as Error).message}`))
    }
    return this.#written
  }
}
