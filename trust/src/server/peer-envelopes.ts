// The capability negotiation between the nodes of a cluster (spec 03 `gate.capabilities.v1`,
// docs/postgres.md): a node reads each peer's envelope from the peer's GET /health once the peer's
// heartbeat is fresh. A peer whose envelope is missing, malformed, of another schema id, or lacks a
// feature this node needs (`accepts_hybrid_signatures` while the shared authority key is hybrid) is
// not counted (ClusterNode): no quorum or leadership rests on it. Logged once per peer as
// gate_incompatible_peer, and read again at most every REREAD_MS, so a peer upgraded in place is
// counted again. A peer not read yet (still starting, unreachable over HTTP) is counted by its
// heartbeat alone: nodes meet through the database, and its heartbeat already says it is alive.
import { agreeWithPeer, type GateFeature } from '@gate/sdk'

const TIMEOUT_MS = 2000
/** A peer refused or not read is asked again after this long. */
const REREAD_MS = 10_000

/** GET `${url}/health`: status and parsed body; rejects when the peer cannot be reached or answers no JSON. */
export type HealthReader = (url: string) => Promise<{ status: number; body: unknown }>

async function readHealth(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url.replace(/\/+$/, '')}/health`, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' })
  return { status: response.status, body: await response.json() }
}

export interface PeerEnvelopesOptions {
  /** The features this node needs every peer to accept. */
  required: () => readonly GateFeature[]
  log: (line: string) => void
  now: () => number
  /** Default: fetch. */
  readHealth?: HealthReader
  /** Called when a peer is refused or counted again. */
  onChange?: () => void
}

export class PeerEnvelopes {
  readonly #options: PeerEnvelopesOptions
  readonly #read: HealthReader
  readonly #agreed = new Set<string>()
  /** Refused peers, with why. */
  readonly #refused = new Map<string, string>()
  readonly #nextAttempt = new Map<string, number>()
  readonly #inFlight = new Map<string, Promise<void>>()

  constructor(options: PeerEnvelopesOptions) {
    this.#options = options
    this.#read = options.readHealth ?? readHealth
  }

  /** Whether `url`'s envelope was found incompatible (it is then not counted). */
  refused(url: string): boolean {
    return this.#refused.has(url)
  }

  /** Starts reading the envelope of each of `urls` not agreed yet and due; resolves when those reads end. */
  visit(urls: readonly string[]): Promise<void> {
    const now = this.#options.now()
    for (const url of urls) {
      if (this.#agreed.has(url) || this.#inFlight.has(url) || (this.#nextAttempt.get(url) ?? 0) > now) continue
      this.#nextAttempt.set(url, now + REREAD_MS)
      this.#inFlight.set(
        url,
        this.#check(url).finally(() => this.#inFlight.delete(url)),
      )
    }
    return Promise.all(this.#inFlight.values()).then(() => undefined)
  }

  async #check(url: string): Promise<void> {
    let answer: { status: number; body: unknown }
    try {
      answer = await this.#read(url)
    } catch {
      return // not read: counted by its heartbeat, asked again later
    }
    const body = answer.body
    // a node still starting answers 503 with an error body, no health: not read yet
    if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { status?: unknown }).status !== 'string') return
    try {
      agreeWithPeer((body as { capabilities?: unknown }).capabilities, `cluster peer ${url}`, this.#options.required())
    } catch (err) {
      const message = (err as Error).message
      if (this.#refused.get(url) !== message) this.#options.log(`cluster: gate_incompatible_peer: ${message}; it is not counted in the quorum`)
      const changed = !this.#refused.has(url)
      this.#refused.set(url, message)
      if (changed) this.#options.onChange?.()
      return
    }
    if (this.#refused.delete(url)) {
      this.#options.log(`cluster: peer ${url} advertises a compatible envelope again; it is counted`)
      this.#options.onChange?.()
    }
    this.#agreed.add(url)
    this.#nextAttempt.delete(url)
  }
}
