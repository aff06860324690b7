// The two authority flavours trust-control signs with: the sidecar's pinned signer (its /v1 routes) and
// `gate trust serve`'s authority store, rotated in place and locked across nodes on PostgreSQL; and the
// binding of a configured key file to the store at start. Keys are of any algorithm (@gate/sdk
// signing-key.ts), kept in the store as signingKeyBytes.
import { createSignerFromKeyBytes, generateSigningKey, signingKeyBytes, signingKeyFromBytes, type KeyAlgorithmName, type Signer } from '@gate/sdk'
import { AuthorityPinnedError, TrustConfigError } from './errors.js'
import type { AuthorityPort, AuthorityStatus } from './ports.js'
import type { TrustAuthorityStore } from './store-ports.js'

/**
 * The sidecar's authority: the signer it was started with (seed file or per-boot key) is pinned for the
 * process lifetime, so rotation answers 409. Status is read from the authority store without writing
 * it: generation and rotation time when the store holds this key, 0 and null otherwise.
 */
export function createPinnedAuthority(signer: Signer, store: Pick<TrustAuthorityStore, 'trustedPublicKeys' | 'current'>, reason: string): AuthorityPort {
  return {
    signer: () => signer,
    status(): AuthorityStatus {
      const keys = store.trustedPublicKeys()
      const current = store.current()
      const index = keys.indexOf(signer.publicKey)
      return {
        publicKey: signer.publicKey,
        generation: index === -1 ? 0 : index + 1,
        rotatedAt: current?.publicKey === signer.publicKey ? current.rotatedAt : null,
        trustedPublicKeys: index === -1 ? [...keys, signer.publicKey] : keys,
      }
    },
    rotate: () => Promise.reject(new AuthorityPinnedError(reason)),
  }
}

/** `gate trust serve`'s authority: the authority store's current key, rotated in place. */
export interface RotatingAuthority extends AuthorityPort {
  /** Runs `fn` while no rotation can happen, on any node (sign-and-append of a receipt, issuance). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>
}

/** Options of `createRotatingAuthority`. */
export interface RotatingAuthorityOptions {
  /** Runs inside the rotation's critical section with the retiring signer, before its seed is wiped. */
  beforeRotate?: (retiring: Signer) => Promise<void>
  /** Rotation answers 409 with this reason (the key is pinned). */
  pinnedReason?: string
  /**
   * Holds a lock every node shares (PostgreSQL: an advisory lock): `shared` around signing, `exclusive`
   * around a rotation. Default: none (one process, which the in-process queue already serializes).
   */
  lock?: <T>(mode: 'shared' | 'exclusive', fn: () => Promise<T>) => Promise<T>
  /** Picks up a rotation another node made (reloads the store when its generation moved). */
  refresh?: () => Promise<unknown>
}

/**
 * An authority backed by the authority store. `beforeRotate` runs inside the rotation's critical
 * section with the retiring signer, before its seed is wiped: the core forms it can still make are
 * stored there (storeCoreForms), because a row it signed has none once the seed is gone. The signer
 * follows the store's current key (a rotation here, or one another node made and `refresh` loaded).
 */
export function createRotatingAuthority(store: TrustAuthorityStore, options: RotatingAuthorityOptions = {}): RotatingAuthority {
  if (store.current() === undefined) throw new AuthorityPinnedError('the authority store has no key')
  let signer: Signer | undefined
  let signerGeneration = -1
  const currentSigner = (): Signer => {
    const state = store.current()!
    if (signer === undefined || state.generation !== signerGeneration) {
      signer = createSignerFromKeyBytes(state.seed)
      signerGeneration = state.generation
    }
    return signer
  }
  const lock = options.lock ?? (<T>(_mode: 'shared' | 'exclusive', fn: () => Promise<T>) => fn())
  let tail: Promise<unknown> = Promise.resolve()
  const queue = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => undefined)
    return run
  }
  const status = (): AuthorityStatus => {
    const state = store.current()!
    return { publicKey: state.publicKey, generation: state.generation, rotatedAt: state.rotatedAt, trustedPublicKeys: store.trustedPublicKeys() }
  }
  return {
    signer: currentSigner,
    status,
    exclusive: fn =>
      queue(() =>
        lock('shared', async () => {
          await options.refresh?.()
          return fn()
        }),
      ),
    rotate: (rotation = {}) =>
      queue(() =>
        lock('exclusive', async () => {
          if (options.pinnedReason !== undefined) throw new AuthorityPinnedError(options.pinnedReason)
          await options.refresh?.()
          // the next key keeps the current key's algorithm unless another is asked for: a rotation
          // never silently moves a P-384 or hybrid authority to Ed25519
          const algorithm = rotation.algorithm ?? algorithmNameOf(store.current()!.seed)
          await options.beforeRotate?.(currentSigner())
          await store.rotate(signingKeyBytes(generateSigningKey(algorithm)))
          return status()
        }),
      ),
  }
}

/** The `gate keygen --algorithm` name of a stored key: its algorithm, a hybrid key's alg_set. */
export function algorithmNameOf(keyBytes: Uint8Array): KeyAlgorithmName {
  const key = signingKeyFromBytes(keyBytes)
  return key.algorithm === 'hybrid' ? key.algSet : key.algorithm
}

/**
 * Makes the authority store hold the key to sign with. The store is the source of truth for the trusted
 * keys: a configured seed is made current (recorded as a new generation when it differs), unless an
 * earlier generation already used it: going back to a retired key is refused. Without one, the store's
 * key is used, created when empty.
 */
export async function bindAuthority(store: TrustAuthorityStore, seed: Uint8Array | undefined, seedSource: string): Promise<void> {
  if (seed === undefined) {
    await store.ensureKey(() => signingKeyBytes(generateSigningKey('ed25519')))
    return
  }
  const publicKey = createSignerFromKeyBytes(seed).publicKey
  if (store.current()?.publicKey === publicKey) return
  if (store.trustedPublicKeys().includes(publicKey)) {
    throw new TrustConfigError(`the key of ${seedSource} was retired by a later generation in ${store.path}; refusing to sign with it again`)
  }
  await store.rotate(seed)
}
