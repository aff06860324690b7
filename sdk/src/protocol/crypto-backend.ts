// Picks the crypto implementation once: node:crypto where the runtime has it (about 10x faster for
// Ed25519 here), @noble/* where it does not (Next.js edge runtime). No static `node:` import, so this
// module loads on the edge; `process.getBuiltinModule` exists from Node 20.16.
import type * as NodeCrypto from 'node:crypto'
import { loadNodeBuiltin } from './node-builtin.js'

export type CryptoBackendName = 'node' | 'noble'

/** node:crypto when available, else undefined. */
export const nodeCrypto: typeof NodeCrypto | undefined = loadNodeBuiltin<typeof NodeCrypto>('node:crypto')

/** The backend used when a caller does not choose one. */
export const defaultBackend: CryptoBackendName = nodeCrypto === undefined ? 'noble' : 'node'
