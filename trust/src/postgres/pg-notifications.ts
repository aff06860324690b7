// One LISTEN connection per process, outside the pools: PostgreSQL delivers a NOTIFY to it when the
// notifying transaction commits, on whichever node that ran. Trust-control uses it to answer the
// sidecars' held revocation-feed requests the moment a revocation commits anywhere in the cluster
// (the feed route's periodic look stays, as the fallback while this connection is down).
//
// A lost connection is opened again with backoff (100 ms to 2 s). Notifications sent while it was away
// are lost, so each reconnect calls every listener once: "look again".
import pg from 'pg'
import { InvalidConfigError } from '@gate/sdk'

/** The channel a committed revocation notifies (PgRevocationStore.revoke). */
export const REVOCATION_CHANNEL = 'gate_revocations'

const MIN_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 2000

/** Options of `PgNotificationListener`. */
export interface PgNotificationListenerOptions {
  url: string
  channel: string
  /** `application_name` of the connection. */
  applicationName: string
  /** How long opening the connection may take, in milliseconds. */
  connectTimeoutMs: number
}

export class PgNotificationListener {
  readonly #options: PgNotificationListenerOptions
  readonly #listeners = new Set<() => void>()
  #client: pg.Client | undefined
  #closed = false
  #failures = 0
  #retry: NodeJS.Timeout | undefined
  #connecting: Promise<void> | undefined

  constructor(options: PgNotificationListenerOptions) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.channel)) throw new InvalidConfigError('notification channel', 'a lower-case SQL identifier', options.channel)
    this.#options = options
  }

  /** Opens the connection; resolves once it listens, or after the first failure (it keeps retrying). */
  start(): Promise<void> {
    this.#connecting ??= this.#connect()
    return this.#connecting
  }

  /** True while the connection listens. */
  get listening(): boolean {
    return this.#client !== undefined
  }

  /** Calls `listener` at each notification on the channel, and after each reconnect. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    await this.#connecting
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => undefined)
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#options.url, application_name: this.#options.applicationName, connectionTimeoutMillis: this.#options.connectTimeoutMs, keepAlive: true })
    // until it listens, an error only fails the connect below
    client.on('error', () => undefined)
    try {
      await client.connect()
      // the channel is checked to be an identifier in the constructor: LISTEN takes no parameter
      await client.query(`LISTEN ${this.#options.channel}`)
    } catch {
      await client.end().catch(() => undefined)
      this.#connecting = undefined
      this.#scheduleReconnect()
      return
    }
    this.#connecting = undefined
    if (this.#closed) {
      await client.end().catch(() => undefined)
      return
    }
    const reconnected = this.#failures > 0
    this.#failures = 0
    this.#client = client
    client.on('notification', message => {
      if (message.channel === this.#options.channel) this.#notify()
    })
    const lost = () => {
      if (this.#client !== client) return
      this.#client = undefined
      client.end().catch(() => undefined)
      this.#scheduleReconnect()
    }
    client.on('error', lost)
    client.on('end', lost)
    if (reconnected) this.#notify()
  }

  #scheduleReconnect(): void {
    if (this.#closed) return
    const delayMs = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** this.#failures)
    this.#failures++
    this.#retry = setTimeout(() => void this.start(), delayMs)
    this.#retry.unref()
  }

  #notify(): void {
    for (const listener of this.#listeners) listener()
  }
}
