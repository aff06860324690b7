// Trust in the authority trust-control publishes (GET /v1/authority, gate.fleet.authority.v1): its trusted keys become issuers
// whose capability tokens verify here. Pinned at the first answer, then followed through rotations:
// a later answer is accepted only when it keeps every key already trusted and its generation does not
// go back (a rotation keeps earlier keys trusted), so a different trust-control answering at the same
// URL cannot swap the authority under a running sidecar.
import type { AuthorityMessage } from '@gate/trust'
import type { ControlConnection } from './control-connection.js'

const TIMEOUT_MS = 5000

export interface AuthoritySnapshot {
  publicKey: string
  generation: number
  trustedPublicKeys: readonly string[]
}

export class AuthorityFollower {
  readonly #connection: ControlConnection
  readonly #log: (line: string) => void
  #pinned: AuthoritySnapshot | undefined
  #refreshing: Promise<void> | undefined

  constructor(connection: ControlConnection, log: (line: string) => void) {
    this.#connection = connection
    this.#log = log
  }

  /** The followed authority; undefined until trust-control first answered. */
  get current(): AuthoritySnapshot | undefined {
    return this.#pinned
  }

  /** Keys tokens issued by trust-control are signed with (none before the first answer). */
  trustedKeys(): readonly string[] {
    return this.#pinned?.trustedPublicKeys ?? []
  }

  /** Reads /v1/authority again when `generation` differs from the followed one (or nothing is pinned yet). */
  follow(generation?: number, publicKey?: string): Promise<void> {
    if (this.#pinned !== undefined && generation === this.#pinned.generation && publicKey === this.#pinned.publicKey) return Promise.resolve()
    this.#refreshing ??= this.#refresh().finally(() => (this.#refreshing = undefined))
    return this.#refreshing
  }

  async #refresh(): Promise<void> {
    const next = snapshotOf(await this.#connection.expectMessage('gate.fleet.authority.v1', this.#connection.get('/v1/authority', TIMEOUT_MS)))
    const pinned = this.#pinned
    if (pinned === undefined) {
      this.#pinned = next
      this.#log(`fleet: trusting trust-control's authority ${next.publicKey} (generation ${next.generation}, ${next.trustedPublicKeys.length} key(s))`)
      return
    }
    const dropped = pinned.trustedPublicKeys.filter(k => !next.trustedPublicKeys.includes(k))
    if (dropped.length > 0 || next.generation < pinned.generation) {
      // kept pinned: tokens of the authority followed so far still verify, none of the newcomer's do
      this.#log(`fleet: refusing trust-control's authority ${next.publicKey} (generation ${next.generation}): it drops ${dropped.length} pinned key(s) or goes back from generation ${pinned.generation}`)
      return
    }
    if (next.generation !== pinned.generation) this.#log(`fleet: trust-control's authority rotated to ${next.publicKey} (generation ${next.generation})`)
    this.#pinned = next
  }
}

function snapshotOf(answer: AuthorityMessage): AuthoritySnapshot {
  const { publicKey, generation, trustedPublicKeys: keys } = answer
  return { publicKey, generation, trustedPublicKeys: keys.includes(publicKey) ? keys : [...keys, publicKey] }
}
