// The authority signing key: from `--authority-seed-file` (stable across restarts) or generated fresh
// with a warning. A seed file holds 64 hex characters (32 bytes); `gate keygen` writes one with 0600.
import { readFile, writeFile, stat } from 'node:fs/promises'
import { createSigner, generateSecret, hexToBytes, bytesToHex, type Signer } from '@gate/sdk'
import { ConfigError } from '../errors.js'

export interface Authority {
  signer: Signer
  /** True when the key was generated for this process only. */
  ephemeral: boolean
  /** The Ed25519 seed, for the receipt writer thread only (threaded-receipt-writer.ts). */
  seed: Uint8Array
}

function authorityFor(seed: Uint8Array, ephemeral: boolean): Authority {
  return { signer: createSigner({ secret: seed }), ephemeral, seed }
}

export async function loadAuthority(seedFile: string | undefined): Promise<Authority> {
  if (seedFile === undefined) return authorityFor(generateSecret('ed25519'), true)
  let text: string
  try {
    text = await readFile(seedFile, 'utf8')
  } catch (err) {
    throw new ConfigError(`cannot read --authority-seed-file ${seedFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (create one with: gate keygen ${seedFile})`, err)
  }
  const seed = hexToBytes(text.trim().toLowerCase())
  if (seed === undefined || seed.length !== 32) throw new ConfigError(`--authority-seed-file ${seedFile} must contain 64 hex characters (an Ed25519 seed)`)
  const mode = (await stat(seedFile)).mode & 0o777
  if ((mode & 0o077) !== 0) {
    process.emitWarning(`authority seed file ${seedFile} is readable by others (mode ${mode.toString(8)}); chmod 600 it`)
  }
  return authorityFor(seed, false)
}

/** Writes a new seed file with mode 0600; refuses to overwrite an existing file. Returns the public key. */
export async function writeSeedFile(path: string): Promise<string> {
  const seed = generateSecret('ed25519')
  try {
    await writeFile(path, bytesToHex(seed) + '\n', { mode: 0o600, flag: 'wx' })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new ConfigError(`${path} already exists; refusing to overwrite a signing key`, err)
    throw new ConfigError(`cannot write ${path}: ${(err as Error).message}`, err)
  }
  return createSigner({ secret: seed }).publicKey
}
