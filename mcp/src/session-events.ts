// One session's notification log as the SDK transport's EventStore (spec 03, "Events"): every event a
// session's streams carry gets the id `{session_id}-{sequence}`, sequences counting up per session
// across its POST and GET streams, and the last `window` events are retained in the edge-session store
// for a Last-Event-ID replay (after a restart too). A replay names an event of this session inside the
// window, or it is refused (409) before the SDK sees it: ids of another session are never replayed.
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { EdgeSessionStore } from './edge-session-store.js'

/** Why a Last-Event-ID cannot be replayed. */
export type ReplayRefusal = 'foreign' | 'outside_window'

export class SessionEvents implements EventStore {
  readonly #sessionId: string
  readonly #store: EdgeSessionStore
  readonly #window: number
  #last: number
  // appends are chained so sequences reach the store in order
  #appended: Promise<void> = Promise.resolve()

  private constructor(sessionId: string, store: EdgeSessionStore, window: number, last: number) {
    this.#sessionId = sessionId
    this.#store = store
    this.#window = window
    this.#last = last
  }

  /** The log of `sessionId`, continuing after what the store retained (a resumed session). */
  static async open(sessionId: string, store: EdgeSessionStore, window: number): Promise<SessionEvents> {
    const { last } = await store.sequenceRange(sessionId)
    return new SessionEvents(sessionId, store, window, last)
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const sequence = ++this.#last
    const appended = this.#appended.then(() => this.#store.appendEvent({ sessionId: this.#sessionId, sequence, streamId, message }, this.#window))
    this.#appended = appended.catch(() => {})
    await appended
    return `${this.#sessionId}-${sequence}`
  }

  /** Whether `eventId` can be replayed: undefined when it can, else why not. */
  async refusal(eventId: string): Promise<ReplayRefusal | undefined> {
    const sequence = this.#sequenceOf(eventId)
    if (sequence === undefined) return 'foreign'
    await this.#appended
    const { first, last } = await this.#store.sequenceRange(this.#sessionId)
    // the client holds `sequence` and needs everything after it: `sequence + 1` must still be retained
    if (sequence > last || sequence < first - 1) return 'outside_window'
    return undefined
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const sequence = this.#sequenceOf(eventId)
    if (sequence === undefined) return undefined
    const [event] = await this.#store.eventsAfter(this.#sessionId, sequence - 1)
    return event?.sequence === sequence ? event.streamId : undefined
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const sequence = this.#sequenceOf(lastEventId)
    const streamId = await this.getStreamIdForEventId(lastEventId)
    if (sequence === undefined || streamId === undefined) throw new Error(`event ${lastEventId} is not retained`)
    for (const event of await this.#store.eventsAfter(this.#sessionId, sequence)) {
      // a priming event (empty data) carries only an id: nothing to replay
      if (event.streamId !== streamId || !('jsonrpc' in event.message)) continue
      await send(`${this.#sessionId}-${event.sequence}`, event.message as JSONRPCMessage)
    }
    return streamId
  }

  #sequenceOf(eventId: string): number | undefined {
    const prefix = `${this.#sessionId}-`
    if (!eventId.startsWith(prefix)) return undefined
    const digits = eventId.slice(prefix.length)
    if (!/^\d{1,15}$/.test(digits)) return undefined
    return Number(digits)
  }
}
