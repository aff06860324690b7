// The authority key on PostgreSQL, shared by every trust-control node: the current seed, its generation
// and every earlier public key (spec 03 authority block). A rotation wipes the retired seed. Key changes
// run in a transaction holding the authority advisory lock, and `withAuthorityLock` lets a node hold the
// same lock (shared to sign, exclusive to rotate) across work that spans several statements, so no node
// signs with a key another node is retiring. Each node caches the keys and reloads them when the
// database's generation moves (`refresh`, run before each signature and by the cluster heartbeat).
//
// The seed is stored in the database: whoever can read the `authority_keys` table can sign as the
// authority. docs/postgres.md says how to restrict it.
import { InvalidConfigError, sha256Hex } from '@gate/sdk'
import { StoreFailedError, StoreInputError } from '../errors.js'
import type { AuthorityState, TrustAuthorityStore } from '../store-ports.js'
import { checkAuthorityKey, isAuthorityKey } from '../stores/store-input.js'
import type { PgDatabase, PgExecutor } from './pg-database.js'
import { AUTHORITY_KEYS_LOCK, AUTHORITY_LOCK } from './pg-locks.js'

interface KeyRow {
  generation: number
  public_key: string
  seed: Buffer | null
  created_at: number
}

export class PgAuthorityStore implements TrustAuthorityStore {
  readonly #db: PgDatabase
  readonly #derivePublicKey: (seed: Uint8Array) => string
  readonly #now: () => number
  #current: AuthorityState | undefined
  #trusted: string[] = []

  constructor(db: PgDatabase, derivePublicKey: (seed: Uint8Array) => string, now: () => number) {
    this.#db = db
    this.#derivePublicKey = derivePublicKey
    this.#now = now
  }

  get path(): string {
    return this.#db.location
  }

  get isEphemeral(): boolean {
    return false
  }

  current(): AuthorityState | undefined {
    const current = this.#current
    return current === undefined ? undefined : { ...current, seed: Uint8Array.from(current.seed) }
  }

  trustedPublicKeys(): string[] {
    return [...this.#trusted]
  }

  /** The current key, creating generation 1 from `createSeed()` when the database has none (once, whichever node is first). */
  async ensureKey(createSeed: () => Uint8Array): Promise<AuthorityState> {
    await this.reload()
    return this.current() ?? this.#write(createSeed(), true)
  }

  /**
   * Makes `newSeed` current at generation + 1 and wipes the previous seed; resolves after commit. The
   * current key again is a no-op (two nodes binding the same seed file at once); a key an earlier
   * generation used is refused.
   */
  rotate(newSeed: Uint8Array): Promise<AuthorityState> {
    return this.#write(newSeed, false)
  }

  // `firstOnly`: create generation 1 unless another node already did (then use its key).
  async #write(newSeed: Uint8Array, firstOnly: boolean): Promise<AuthorityState> {
    const seed = checkAuthorityKey(newSeed)
    const publicKey = this.#derivePublicKey(Uint8Array.from(seed))
    if (typeof publicKey !== 'string' || publicKey === '') throw new InvalidConfigError('authority store options.derivePublicKey', 'a function returning a non-empty string', publicKey)
    const rotatedAt = this.#now()
    await this.#db.transaction(async tx => {
      await tx.get('SELECT pg_advisory_xact_lock($1)', [AUTHORITY_KEYS_LOCK.toString()])
      const rows = await readKeys(tx)
      const last = rows[rows.length - 1]
      if (last?.public_key === publicKey || (firstOnly && last !== undefined)) return
      if (rows.some(r => r.public_key === publicKey)) throw new StoreInputError('seed', 'a key not used by an earlier generation', publicKey)
      await tx.run('UPDATE authority_keys SET seed = NULL, retired_at = $1 WHERE retired_at IS NULL', [rotatedAt])
      // key_hash keeps keys unique (migration 5: a hybrid key is too wide for a unique index of its own)
      await tx.run('INSERT INTO authority_keys (generation, public_key, key_hash, seed, created_at) VALUES ($1, $2, $3, $4, $5)', [(last?.generation ?? 0) + 1, publicKey, sha256Hex(publicKey), Buffer.from(seed), rotatedAt])
    })
    await this.reload()
    if (firstOnly && this.#current !== undefined) return this.current()!
    if (this.#current?.publicKey !== publicKey) throw new StoreFailedError('authority', this.path, 'the rotated key was committed but another node moved past it')
    return this.current()!
  }

  /** Re-reads the keys (another node may have rotated). */
  async reload(): Promise<void> {
    const rows = await readKeys(this.#db)
    this.#trusted = rows.map(row => row.public_key)
    const last = rows[rows.length - 1]
    if (last === undefined) {
      this.#current = undefined
      return
    }
    if (last.seed === null || !isAuthorityKey(Uint8Array.from(last.seed))) throw new StoreFailedError('authority', this.path, `generation ${last.generation} has no signing key`)
    this.#current = { seed: Uint8Array.from(last.seed), publicKey: last.public_key, generation: last.generation, rotatedAt: last.created_at }
  }

  /** Reloads when the database's generation differs from the cached one; true when it did. */
  async refresh(): Promise<boolean> {
    const row = await this.#db.get<{ generation: number | null }>('SELECT max(generation) AS generation FROM authority_keys')
    if ((row?.generation ?? undefined) === this.#current?.generation) return false
    await this.reload()
    return true
  }

  /** Runs `fn` holding the authority lock: `shared` while signing, `exclusive` while rotating (every node). */
  withAuthorityLock<R>(mode: 'shared' | 'exclusive', fn: () => Promise<R>): Promise<R> {
    return this.#db.withClient(async client => {
      await client.query(mode === 'shared' ? 'SELECT pg_advisory_lock_shared($1)' : 'SELECT pg_advisory_lock($1)', [AUTHORITY_LOCK.toString()])
      try {
        return await fn()
      } finally {
        await client.query(mode === 'shared' ? 'SELECT pg_advisory_unlock_shared($1)' : 'SELECT pg_advisory_unlock($1)', [AUTHORITY_LOCK.toString()]).catch(() => undefined)
      }
    })
  }
}

function readKeys(db: PgExecutor): Promise<KeyRow[]> {
  return db.all<KeyRow>('SELECT generation, public_key, seed, created_at FROM authority_keys ORDER BY generation')
}
