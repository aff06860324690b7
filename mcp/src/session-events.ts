// One session's notification log as the SDK transport's EventStore (spec 03, "Events"): every event a
// session's streams carry gets the id `{session_id}-{sequence}`, sequences counting up per session
// across its POST and GET streams, and the last `window` events are retained in the edge-session store
// for a Last-Event-ID replay (after a restart too). The newest events stay in memory too, so a replay
// of what a client just missed (the usual one) reads no store; they reach the store behind the answers
// (event-writer.ts). A replay names an event of this session inside the window, or it is refused (409)
// before the SDK sees it: ids of another session are never replayed.
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { EdgeEvent, EdgeSessionStore } from './edge-session-store.js'
import type { EventWriter } from './event-writer.js'

/** Why a Last-Event-ID cannot be replayed. */
export type ReplayRefusal = 'foreign' | 'outside_window'

// events kept in memory per session: enough for a client's reconnect, bounded for many sessions
const RECENT = 64

export class SessionEvents implements EventStore {
  readonly #sessionId: string
  readonly #store: EdgeSessionStore
  readonly #writer: EventWriter
  readonly #window: number
  readonly #recent: EdgeEvent[]
  #first: number
  #last: number

  private constructor(sessionId: string, store: EdgeSessionStore, writer: EventWriter, window: number, range: { first: number; last: number }, recent: EdgeEvent[]) {
    this.#sessionId = sessionId
    this.#store = store
    this.#writer = writer
    this.#window = window
    this.#first = range.first
    this.#last = range.last
    this.#recent = recent
  }

  /** The log of `sessionId`, continuing after what the store retained (a resumed session). */
  static async open(sessionId: string, store: EdgeSessionStore, writer: EventWriter, window: number): Promise<SessionEvents> {
    const range = await store.sequenceRange(sessionId)
    const recent = range.last === 0 ? [] : await store.eventsAfter(sessionId, Math.max(range.first - 1, range.last - RECENT))
    return new SessionEvents(sessionId, store, writer, window, range, recent)
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const sequence = ++this.#last
    if (this.#first === 0) this.#first = sequence
    this.#first = Math.max(this.#first, sequence - this.#window + 1)
    const event: EdgeEvent = { sessionId: this.#sessionId, sequence, streamId, message }
    this.#recent.push(event)
    if (this.#recent.length > Math.min(RECENT, this.#window)) this.#recent.shift()
    this.#writer.add(event)
    return `${this.#sessionId}-${sequence}`
  }

  /** Whether `eventId` can be replayed: undefined when it can, else why not. */
  async refusal(eventId: string): Promise<ReplayRefusal | undefined> {
    const sequence = this.#sequenceOf(eventId)
    if (sequence === undefined) return 'foreign'
    // the client holds `sequence` and needs everything after it: `sequence + 1` must still be retained
    if (this.#last === 0 || sequence > this.#last || sequence < this.#first - 1) return 'outside_window'
    return undefined
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const sequence = this.#sequenceOf(eventId)
    if (sequence === undefined) return undefined
    const [event] = await this.#after(sequence - 1)
    return event?.sequence === sequence ? event.streamId : undefined
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const sequence = this.#sequenceOf(lastEventId)
    const streamId = await this.getStreamIdForEventId(lastEventId)
    if (sequence === undefined || streamId === undefined) throw new Error(`event ${lastEventId} is not retained`)
    for (const event of await this.#after(sequence)) {
      // a priming event (empty data) carries only an id: nothing to replay
      if (event.streamId !== streamId || !('jsonrpc' in event.message)) continue
      await send(`${this.#sessionId}-${event.sequence}`, event.message as JSONRPCMessage)
    }
    return streamId
  }

  // the retained events after `sequence`: from memory when it holds them all, else from the store once
  // everything pending is written
  async #after(sequence: number): Promise<EdgeEvent[]> {
    const oldest = this.#recent[0]?.sequence
    if (oldest !== undefined && sequence >= oldest - 1) return this.#recent.filter(e => e.sequence > sequence)
    await this.#writer.flush()
    return (await this.#store.eventsAfter(this.#sessionId, sequence)).filter(e => e.sequence >= this.#first)
  }

  #sequenceOf(eventId: string): number | undefined {
    const prefix = `${this.#sessionId}-`
    if (!eventId.startsWith(prefix)) return undefined
    const digits = eventId.slice(prefix.length)
    if (!/^\d{1,15}$/.test(digits)) return undefined
    return Number(digits)
  }
}
