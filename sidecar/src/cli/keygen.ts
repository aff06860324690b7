// `gate keygen FILE`: writes a new Ed25519 authority seed with 0600 permissions and prints its public key.
import { writeSeedFile } from '../config/authority-seed.js'
import { UsageError } from '../errors.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'

const USAGE = `Usage: gate keygen FILE

Writes a new Ed25519 signing seed (64 hex characters) to FILE with mode 0600 and prints the public key.
Use it with --authority-seed-file so receipts and capabilities verify across restarts. Never overwrites.`

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes('keygen', USAGE, async () => {
    const { values, positionals } = parseFlags(argv, {}, true)
    if (values.help === true) {
      process.stdout.write(USAGE + '\n')
      return 0
    }
    if (positionals.length !== 1) throw new UsageError('expected exactly one FILE argument')
    const publicKey = await writeSeedFile(positionals[0] as string)
    process.stdout.write(`${publicKey}\n`)
    return 0
  })
}
