// Enrols this process's signing key at trust-control (POST /v1/keys/enroll), so its shipped receipts
// are accepted at ingest (a receipt signed by a key never enrolled is refused there). Tried at start;
// when trust-control cannot be reached then, retried in the background until it answers. The receipt
// outbox waits for it: it never ships receipts an ingest would refuse for want of an enrolment. When
// the capability negotiation with trust-control (peer-capabilities.ts) had not succeeded at start, it
// runs first; a peer found incompatible (gate_incompatible_peer) ends the attempts for good.
import type { EnrollRequest } from '@gate/trust'
import { ControlRefusedError, type ControlConnection } from './control-connection.js'

const TIMEOUT_MS = 5000
const MAX_BACKOFF_MS = 5000

export interface KeyEnrolmentOptions {
  publicKey: string
  /** Who the key belongs to (1-128 printable ASCII), shown by GET /v1/keys. */
  label: string
  log: (line: string) => void
  /** The negotiation to pass before enrolling (rejects with gate_incompatible_peer), or undefined when agreed at start. */
  negotiate?: () => Promise<unknown>
}

export class KeyEnrolment {
  readonly #connection: ControlConnection
  readonly #options: KeyEnrolmentOptions
  readonly #done: Promise<void>
  #enrolled = false
  #stopped = false
  #lastError: string | null = null
  #endRefusal: () => void = () => {}
  // an incompatible peer: the wait for the enrolment lasts until stop()
  readonly #refused = new Promise<void>(resolve => {
    this.#endRefusal = resolve
  })

  constructor(connection: ControlConnection, options: KeyEnrolmentOptions) {
    this.#connection = connection
    this.#options = options
    this.#done = this.#run()
  }

  get enrolled(): boolean {
    return this.#enrolled
  }

  get lastError(): string | null {
    return this.#lastError
  }

  /** Resolves once the key is enrolled (never rejects; stop() ends the wait). */
  whenEnrolled(): Promise<void> {
    return this.#done
  }

  stop(): void {
    this.#stopped = true
    this.#endRefusal()
  }

  async #run(): Promise<void> {
    let backoffMs = 250
    const request: EnrollRequest = { publicKey: this.#options.publicKey, label: this.#options.label }
    const body = JSON.stringify(request)
    let negotiate = this.#options.negotiate
    while (!this.#stopped) {
      try {
        if (negotiate !== undefined) {
          await negotiate()
          negotiate = undefined
        }
        const answer = await this.#connection.expectMessage('gate.fleet.enrolled_key.v1', this.#connection.post('/v1/keys/enroll', body, TIMEOUT_MS))
        this.#enrolled = true
        this.#lastError = null
        this.#options.log(`fleet: signing key ${this.#options.publicKey} ${answer.created === false ? 'was already enrolled' : 'enrolled'} at trust-control as "${this.#options.label}"`)
        return
      } catch (err) {
        const message = (err as Error).message
        if ((err as { code?: unknown }).code === 'gate_incompatible_peer') {
          this.#lastError = `gate_incompatible_peer: ${message}`
          this.#options.log(`fleet: ${this.#lastError}; the signing key is not enrolled and no receipt is shipped`)
          return this.#refused
        }
        if (message !== this.#lastError) this.#options.log(`fleet: key enrolment: ${message}${err instanceof ControlRefusedError ? '' : '; retrying'}`)
        this.#lastError = message
        await new Promise(resolve => setTimeout(resolve, backoffMs).unref())
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2)
      }
    }
  }
}
