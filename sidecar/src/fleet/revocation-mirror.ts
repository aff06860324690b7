// A replica of trust-control's revocations (GET /v1/revocations, gate.fleet.revocation_page.v1), the sidecar's `revocation_backend:
// remote`. One request at a time follows the feed's cursor; an empty page is held by trust-control until
// a revocation commits, so a revocation reaches this process within one round trip. The replica is
// in memory and replayed from cursor 0 at each start (a restarted sidecar that cannot reach
// trust-control has no fresh state and denies capabilities until it can).
//
// Staleness: the replica is as fresh as trust-control's last answer. Past `maxStalenessMs` without one,
// `unavailable()` names why, and the revocation guard denies every request presenting a capability
// (fail closed: a revocation made meanwhile cannot be known here); requests presenting none are not
// affected.
import type { ControlConnection } from './control-connection.js'

/** How the mirror paces itself. */
export interface RevocationMirrorOptions {
  maxStalenessMs: number
  log: (line: string) => void
  /** Told the authority generation and key of every answer (the authority follower). */
  onAuthority?: (generation: number, publicKey: string) => Promise<void>
  /** Monotonic milliseconds; injectable for tests. */
  clock?: () => number
}

const PAGE = 1000
const MAX_WAIT_MS = 10_000
const MIN_WAIT_MS = 250
/** A held request gets this long beyond its wait before it is given up (a silent network). */
const ANSWER_GRACE_MS = 5000
const MIN_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 2000

export interface RevocationMirrorStatus {
  cursor: number
  revoked: number
  /** Milliseconds since trust-control last answered; null before the first answer. */
  syncAgeMs: number | null
  stale: boolean
  lastError: string | null
}

export class RevocationMirror {
  readonly #connection: ControlConnection
  readonly #options: RevocationMirrorOptions
  readonly #clock: () => number
  readonly #waitMs: number
  readonly #revoked = new Set<string>()
  readonly #listeners = new Set<(capabilityId: string) => void>()
  #cursor = 0
  #syncedAt: number | undefined
  #lastError: string | null = null
  #stopped = false
  #loop: Promise<void> | undefined
  #firstSync: { promise: Promise<void>; resolve: () => void }
  #wake: (() => void) | undefined

  constructor(connection: ControlConnection, options: RevocationMirrorOptions) {
    this.#connection = connection
    this.#options = options
    this.#clock = options.clock ?? (() => performance.now())
    // at least three answers per staleness bound on an idle feed
    this.#waitMs = Math.max(MIN_WAIT_MS, Math.min(MAX_WAIT_MS, Math.floor(options.maxStalenessMs / 3)))
    let resolve!: () => void
    const promise = new Promise<void>(r => (resolve = r))
    this.#firstSync = { promise, resolve }
  }

  /** Starts following the feed; resolves after the first complete sync or `timeoutMs`, whichever is first. */
  async start(timeoutMs: number): Promise<boolean> {
    this.#loop ??= this.#run()
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>(resolve => (timer = setTimeout(() => resolve(false), timeoutMs)))
    const synced = await Promise.race([this.#firstSync.promise.then(() => true), timedOut])
    clearTimeout(timer)
    return synced
  }

  isRevoked(capabilityId: string): boolean {
    return this.#revoked.has(capabilityId)
  }

  /** Calls `listener` with each id the feed newly revokes; returns an unsubscribe. */
  onRevoked(listener: (capabilityId: string) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Why the replica cannot be trusted now (undefined: it can). */
  unavailable(): string | undefined {
    if (this.#syncedAt === undefined) return `revocations have not been received from trust-control ${this.#connection.origin} yet${this.#lastError === null ? '' : ` (${this.#lastError})`}`
    const age = this.#clock() - this.#syncedAt
    if (age <= this.#options.maxStalenessMs) return undefined
    return `revocations from trust-control ${this.#connection.origin} are ${Math.round(age / 1000)} s old, past the ${this.#options.maxStalenessMs / 1000} s bound${this.#lastError === null ? '' : ` (${this.#lastError})`}`
  }

  status(): RevocationMirrorStatus {
    return {
      cursor: this.#cursor,
      revoked: this.#revoked.size,
      syncAgeMs: this.#syncedAt === undefined ? null : Math.round(this.#clock() - this.#syncedAt),
      stale: this.unavailable() !== undefined,
      lastError: this.#lastError,
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true
    this.#wake?.()
    await this.#loop
  }

  // After an error the next request goes out at once and asks for no hold: trust-control answers it as
  // soon as it can, so the mirror is fresh again the moment trust-control is (a held request would keep
  // it stale for the whole hold). While errors continue, the retries back off.
  async #run(): Promise<void> {
    let failures = 0
    while (!this.#stopped) {
      try {
        const full = await this.#round(failures > 0)
        failures = 0
        if (!full) this.#firstSync.resolve()
      } catch (err) {
        const message = (err as Error).message
        if (message !== this.#lastError) this.#options.log(`fleet: revocation feed: ${message}`)
        this.#lastError = message
        failures++
        if (failures > 1) await this.#pause(Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** (failures - 2)))
      }
    }
  }

  // One request (held unless `recovering` or before the first sync); true when the page was full.
  async #round(recovering: boolean): Promise<boolean> {
    const sentAt = this.#clock()
    const wait = this.#syncedAt === undefined || recovering ? 0 : this.#waitMs
    const query = `?cursor=${this.#cursor}&limit=${PAGE}${wait > 0 ? `&waitMs=${wait}` : ''}`
    const page = await this.#connection.expectMessage('gate.fleet.revocation_page.v1', this.#connection.get(`/v1/revocations${query}`, wait + ANSWER_GRACE_MS))
    if (page.latestSeq < this.#cursor) {
      // trust-control's revocation stream restarted (a new database): replay it whole; ids are only added
      this.#options.log(`fleet: trust-control's revocation stream is at ${page.latestSeq}, behind this mirror's cursor ${this.#cursor}: replaying it`)
      this.#cursor = 0
      return true
    }
    for (const r of page.revocations) {
      if (this.#revoked.has(r.capabilityId)) continue
      this.#revoked.add(r.capabilityId)
      for (const listener of this.#listeners) listener(r.capabilityId)
    }
    this.#cursor = page.nextCursor
    await this.#options.onAuthority?.(page.authorityGeneration, page.authorityPublicKey)
    // fresh as of when the request left (conservative: trust-control read its state after that); with
    // a hold of a third of the bound, a live feed is never older than two thirds of it
    this.#syncedAt = Math.max(this.#syncedAt ?? 0, sentAt)
    if (this.#lastError !== null) this.#options.log(`fleet: revocation feed restored (cursor ${this.#cursor})`)
    this.#lastError = null
    return page.revocations.length === PAGE
  }

  #pause(ms: number): Promise<void> {
    return new Promise(resolve => {
      const timer = setTimeout(() => {
        this.#wake = undefined
        resolve()
      }, ms)
      this.#wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }
}
