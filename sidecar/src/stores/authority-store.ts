// The authority store (revision 1): the authority signing key (an Ed25519 seed as its 32 raw bytes, any
// other algorithm's key as its key file line: signingKeyBytes of @gate/sdk), its public key, the
// generation and rotation time, and every earlier public key, so receipts signed before a rotation keep
// verifying (spec 03 authority block: publicKey, generation, rotatedAt, trustedPublicKeys). The file is
// private like every store file (file-mode.ts); a rotation wipes the retired seed.
// Deriving public keys is the signer's job: the store is handed `derivePublicKey`.
import { InvalidConfigError } from '@gate/sdk'
import { checkAuthorityKey, isAuthorityKey, type AuthorityState, type TrustAuthorityStore } from '@gate/trust'
import { StoreFailedError, StoreInputError } from '../errors.js'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { errorText, resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'
import { checkFunctionOption, pickOptions, unixNow } from './store-options.js'

/** Options of `openAuthorityStore`. */
export interface AuthorityStoreOptions extends DatabaseOptions {
  /** Public key (as `kernel_key` writes it) of a stored key (signingKeyBytes). Required. */
  derivePublicKey: (seed: Uint8Array) => string
  /** Clock in Unix seconds, default the system clock. */
  now?: () => number
}

/** Schema revision 1. */
export const AUTHORITY_SCHEMA: StoreSchema = Object.freeze({
  store: 'authority',
  create: [
    `CREATE TABLE authority_keys (
      generation INTEGER PRIMARY KEY,
      public_key TEXT NOT NULL,
      seed BLOB,
      created_at INTEGER NOT NULL,
      retired_at INTEGER
    )`,
  ],
  migrations: [],
})

interface KeyRow {
  generation: number
  public_key: string
  seed: Uint8Array | null
  created_at: number
}

/** Opens (creating 0600, or migrating) the authority store. */
export async function openAuthorityStore(path: string, options: AuthorityStoreOptions): Promise<AuthorityStore> {
  const { own, database } = pickOptions('authority store options', options, ['derivePublicKey', 'now'])
  checkFunctionOption('authority store options.derivePublicKey', own.derivePublicKey, true)
  checkFunctionOption('authority store options.now', own.now)
  const resolved = resolveDatabaseOptions(database)
  const db = await openStoreDatabase(AUTHORITY_SCHEMA, path, resolved)
  try {
    // Overwrite freed bytes, so a retired seed does not linger in the file's free space.
    await db.exec('PRAGMA secure_delete = ON')
    const store = new AuthorityStore(db, own.derivePublicKey!, own.now ?? unixNow)
    await store.reload()
    return store
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
}

/** The authority signing key and the public keys of every generation. */
export class AuthorityStore implements TrustAuthorityStore {
  readonly #db: SqliteDatabase
  readonly #derivePublicKey: (seed: Uint8Array) => string
  readonly #now: () => number
  #current: AuthorityState | undefined
  #trusted: string[] = []

  constructor(db: SqliteDatabase, derivePublicKey: (seed: Uint8Array) => string, now: () => number) {
    this.#db = db
    this.#derivePublicKey = derivePublicKey
    this.#now = now
  }

  get path(): string {
    return this.#db.path
  }

  get isEphemeral(): boolean {
    return this.#db.isEphemeral
  }

  /** The current key, or undefined before the first `rotate` / `ensureKey`. */
  current(): AuthorityState | undefined {
    const current = this.#current
    return current === undefined ? undefined : { ...current, seed: Uint8Array.from(current.seed) }
  }

  /** Public keys of every generation, oldest first; the last is the current one. */
  trustedPublicKeys(): string[] {
    return [...this.#trusted]
  }

  /** The current key, creating generation 1 from `createSeed()` when the store has none. */
  async ensureKey(createSeed: () => Uint8Array): Promise<AuthorityState> {
    return this.current() ?? this.rotate(createSeed())
  }

  /** Makes `newSeed` the current key (generation + 1), retiring and wiping the previous seed; resolves after commit. */
  async rotate(newSeed: Uint8Array): Promise<AuthorityState> {
    const seed = checkAuthorityKey(newSeed)
    const publicKey = this.#derivePublicKey(Uint8Array.from(seed))
    if (typeof publicKey !== 'string' || publicKey === '') {
      throw new InvalidConfigError('authority store options.derivePublicKey', 'a function returning a non-empty string', publicKey)
    }
    if (this.#trusted.includes(publicKey)) throw new StoreInputError('seed', 'a key not used by an earlier generation', publicKey)
    const rotatedAt = this.#now()
    let generation: number
    try {
      generation = await this.#db.transaction(async tx => {
        const last = await tx.get<{ generation: number }>('SELECT coalesce(max(generation), 0) AS generation FROM authority_keys')
        const next = (last?.generation ?? 0) + 1
        await tx.run('UPDATE authority_keys SET seed = NULL, retired_at = ? WHERE retired_at IS NULL', [rotatedAt])
        await tx.run('INSERT INTO authority_keys (generation, public_key, seed, created_at) VALUES (?, ?, ?, ?)', [
          next,
          publicKey,
          seed,
          rotatedAt,
        ])
        return next
      })
    } catch (err) {
      throw new StoreFailedError('authority', this.path, `cannot record the rotated key (${errorText(err)})`, err)
    }
    await this.reload()
    if (this.#current?.generation !== generation) {
      throw new StoreFailedError('authority', this.path, `generation ${generation} was committed but another writer moved past it`)
    }
    return this.current()!
  }

  /** Re-reads the keys from the file (another process may have rotated). */
  async reload(): Promise<void> {
    const rows = await this.#db.all<KeyRow>('SELECT generation, public_key, seed, created_at FROM authority_keys ORDER BY generation')
    this.#trusted = rows.map(row => row.public_key)
    const last = rows[rows.length - 1]
    if (last === undefined) {
      this.#current = undefined
      return
    }
    if (last.seed === null || !isAuthorityKey(last.seed)) {
      throw new StoreFailedError('authority', this.path, `generation ${last.generation} has no signing key`)
    }
    this.#current = { seed: Uint8Array.from(last.seed), publicKey: last.public_key, generation: last.generation, rotatedAt: last.created_at }
  }

  /** Waits for pending writes, then closes the file. */
  close(): Promise<void> {
    return this.#db.close()
  }
}
