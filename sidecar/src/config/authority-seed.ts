// The authority signing key: from `--authority-seed-file` (stable across restarts) or generated fresh
// with a warning. The file is a key file of any algorithm (@gate/sdk signing-key.ts: 64 hex characters
// for Ed25519, as the seed files `gate keygen` always wrote; `p256:`, `p384:` or `hybrid:` lines for the
// others); `gate keygen [--algorithm NAME]` writes one with mode 0600.
import { readFile, writeFile, stat } from 'node:fs/promises'
import {
  createSignerFromKey,
  formatSigningKey,
  generateSigningKey,
  parseSigningKey,
  signingKeyBytes,
  type KeyAlgorithmName,
  type Signer,
  type SigningKey,
} from '@gate/sdk'
import { ConfigError } from '../errors.js'

export interface Authority {
  signer: Signer
  /** True when the key was generated for this process only. */
  ephemeral: boolean
  /** The key as stores keep it (signingKeyBytes), for the receipt writer thread only (threaded-receipt-writer.ts). */
  seed: Uint8Array
}

function authorityFor(key: SigningKey, ephemeral: boolean): Authority {
  return { signer: createSignerFromKey(key), ephemeral, seed: signingKeyBytes(key) }
}

export async function loadAuthority(seedFile: string | undefined): Promise<Authority> {
  if (seedFile === undefined) return authorityFor(generateSigningKey('ed25519'), true)
  return authorityFor(await readKeyFile(seedFile), false)
}

/**
 * Reads a key file named by `flag` (`--authority-seed-file`): any algorithm's; a file others can read is
 * warned about. Errors name the file and what is wrong with it, never its content.
 */
export async function readKeyFile(path: string, flag = '--authority-seed-file'): Promise<SigningKey> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new ConfigError(`cannot read ${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (create one with: gate keygen ${path})`, err)
  }
  let key: SigningKey
  try {
    key = parseSigningKey(text)
  } catch (err) {
    throw new ConfigError(`${flag} ${path} is not a signing key file (${(err as Error).message}); gate keygen [--algorithm ed25519|p256|p384|hybrid] writes one`, err)
  }
  const mode = (await stat(path)).mode & 0o777
  if ((mode & 0o077) !== 0) {
    process.emitWarning(`${flag} ${path} is readable by others (mode ${mode.toString(8)}); chmod 600 it`)
  }
  return key
}

/** Reads a key file into its signer. */
export async function readSigner(path: string, flag?: string): Promise<Signer> {
  return createSignerFromKey(await readKeyFile(path, flag))
}

/** Writes a new key file with mode 0600; refuses to overwrite an existing file. Returns the signer's public key. */
export async function writeSeedFile(path: string, algorithm: KeyAlgorithmName = 'ed25519'): Promise<string> {
  const key = generateSigningKey(algorithm)
  try {
    await writeFile(path, formatSigningKey(key) + '\n', { mode: 0o600, flag: 'wx' })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new ConfigError(`${path} already exists; refusing to overwrite a signing key`, err)
    throw new ConfigError(`cannot write ${path}: ${(err as Error).message}`, err)
  }
  return createSignerFromKey(key).publicKey
}
