// The workspace root holds the lockfile and the linked @gate packages. @noble/ed25519 ships index.ts
// beside index.js and Turbopack resolves the .ts file, which it only compiles for transpiled packages.
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

export default {
  turbopack: { root },
  outputFileTracingRoot: root,
  transpilePackages: ['@noble/ed25519'],
}
