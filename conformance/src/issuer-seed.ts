// --issuer-seed-file: an Ed25519 seed (64 hex characters, as `gate keygen` writes) whose public key
// the sidecar under test trusts as a capability issuer. The delegation and token-field checks sign
// with it; the seed never leaves this process.
import { readFile } from 'node:fs/promises'
import { createSigner, hexToBytes, type Signer } from '@gate/sdk'
import { UsageError } from './errors.js'

/** The signer of a seed file; a missing or malformed file is a UsageError. */
export async function loadIssuerSeed(path: string): Promise<Signer> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new UsageError(`--issuer-seed-file ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, err)
  }
  const seed = hexToBytes(text.trim().toLowerCase())
  if (seed === undefined || seed.length !== 32) throw new UsageError(`--issuer-seed-file ${path} must contain 64 hex characters (an Ed25519 seed)`)
  return createSigner({ secret: seed })
}
