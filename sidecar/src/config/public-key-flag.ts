// Public keys given on the command line (--trusted-key, --trusted-issuer): each in its wire form
// (spec 02 Versioning, spec 03 hybrid form: bare Ed25519 hex, p256:/p384: hex, hybrid:…), checked when
// the flags are read, so a key pasted wrong is a usage error, not a receipt that silently never matches.
import { parsePublicKey } from '@gate/sdk'
import { UsageError } from '../errors.js'

/** The keys of a repeatable flag, each checked; `flag` names it in the error (`--trusted-key`). */
export function readPublicKeyFlags(flag: string, values: readonly string[] | undefined): string[] {
  return (values ?? []).map(value => {
    const parsed = parsePublicKey(value)
    if ('error' in parsed) {
      const shown = value.length > 80 ? `${value.slice(0, 77)}...` : value
      throw new UsageError(`${flag} must be a public key in its wire form (64 hex Ed25519, p256:04…, p384:04…, or hybrid:<classical>:<mldsa65>:<alg_set>): ${parsed.error}, got "${shown}"`)
    }
    return value
  })
}
