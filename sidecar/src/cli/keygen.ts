// `gate keygen [--algorithm NAME] FILE`: writes a new authority signing key file (@gate/sdk
// signing-key.ts) with 0600 permissions and prints its public key.
import { KEY_ALGORITHM_NAMES, type KeyAlgorithmName } from '@gate/sdk'
import { writeSeedFile } from '../config/authority-seed.js'
import { UsageError } from '../errors.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'

const USAGE = `Usage: gate keygen [--algorithm ed25519|p256|p384|hybrid] FILE

Writes a new signing key to FILE with mode 0600 and prints its public key (as receipts write
kernel_key). Every signing service takes it as --authority-seed-file FILE, whatever its algorithm,
so receipts, checkpoints and capabilities verify across restarts. Never overwrites.

  --algorithm NAME  ed25519 (default: 64 hex characters, the seed file Gate always wrote),
                    p256 or p384 (ECDSA, FIPS 186-5: p256:<hex scalar>),
                    hybrid (ed25519+mldsa65) or an alg_set: ed25519+mldsa65, p256+mldsa65,
                    p384+mldsa65 (the classical key and ML-DSA-65, FIPS 204: both sign)`

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes('keygen', USAGE, async () => {
    const { values, positionals } = parseFlags(argv, { algorithm: { type: 'string' } }, true)
    if (values.help === true) {
      process.stdout.write(USAGE + '\n')
      return 0
    }
    if (positionals.length !== 1) throw new UsageError('expected exactly one FILE argument')
    const algorithm = (values.algorithm as string | undefined) ?? 'ed25519'
    if (!(KEY_ALGORITHM_NAMES as readonly string[]).includes(algorithm)) {
      throw new UsageError(`--algorithm must be one of ${KEY_ALGORITHM_NAMES.join(', ')}, got "${algorithm}"`)
    }
    const publicKey = await writeSeedFile(positionals[0] as string, algorithm as KeyAlgorithmName)
    process.stdout.write(`${publicKey}\n`)
    return 0
  })
}
