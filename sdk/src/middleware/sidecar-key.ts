// The sidecar signer key receipts are verified against: pinned by option, or read ONCE from
// GET /gate/live on first use and then never changed until the process restarts (a sidecar that starts
// signing with another key is treated as an impostor, not followed). Concurrent first requests share one
// fetch; a failed fetch is not remembered, so the next request tries again.
import { parsePublicKey } from '../protocol/keys.js'
import type { HealthResponse } from '../types.js'
import { InvalidReceiptError } from '../errors.js'

/** The pinned sidecar signer key. */
export class SidecarKey {
  #key: string | null
  #pending: Promise<string> | undefined
  readonly #fetchLive: () => Promise<HealthResponse>

  constructor(pinned: string | null, fetchLive: () => Promise<HealthResponse>) {
    this.#key = pinned
    this.#fetchLive = fetchLive
  }

  /** The key when it is already known (pinned, or fetched), else null. */
  known(): string | null {
    return this.#key
  }

  /** The key; fetched on the first call when not pinned. */
  get(): Promise<string> {
    if (this.#key !== null) return Promise.resolve(this.#key)
    this.#pending ??= this.#fetchLive().then(
      live => {
        const key = live.kernel_key
        if (typeof key !== 'string' || 'error' in parsePublicKey(key)) {
          this.#pending = undefined
          throw new InvalidReceiptError('GET /gate/live names no usable kernel_key; set sidecarPublicKey')
        }
        this.#key = key
        return key
      },
      (err: unknown) => {
        this.#pending = undefined
        throw err
      },
    )
    return this.#pending
  }
}
