// Bearer authentication of the trust-control routes (spec 03, Authentication 1): the presented token is
// compared in constant time against the admin service token and every per-tenant read token. Both
// sides are hashed (SHA-256) so lengths never leak, and every candidate is compared, so the time taken
// does not reveal which set matched or how far the search went. Absent and unknown tokens get the same
// 401. Tokens are never logged or echoed.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { InvalidConfigError } from '@gate/sdk'
import { bearerToken, checkControlToken } from '@gate/sdk/server'
import type { AuthResult, Principal, TrustAuthenticator } from './ports.js'

/** Options of `createTrustAuthenticator`. */
export interface TrustAuthOptions {
  /** The admin service token (`--service-token-file` or GATE_CONTROL_TOKEN). */
  serviceToken?: string
  /** Tenant id → that tenant's read token (`--tenant-token TENANT=FILE`). */
  tenantTokens?: ReadonlyMap<string, string>
}

/** The one 401 message, for absent, malformed and unknown tokens alike. */
export const UNAUTHORIZED_MESSAGE = 'missing or invalid bearer token'

/** Tenant ids: what CallerIdentity.tenant may hold, kept printable. */
const TENANT_ID = /^[A-Za-z0-9._:@-]{1,128}$/

interface Candidate {
  digest: Buffer
  principal: Principal
}

/** Checks the tokens once, at construction (a bad token set never reaches the first request). */
export function createTrustAuthenticator(options: TrustAuthOptions): TrustAuthenticator {
  const candidates: Candidate[] = []
  const seen = new Set<string>()
  const addCandidate = (token: string, principal: Principal, option: string) => {
    // the one token rule of every Gate service (@gate/sdk/server control-token-rule.ts)
    checkControlToken(token, option)
    const digest = sha256(token)
    const hex = digest.toString('hex')
    // One token must resolve to exactly one principal.
    if (seen.has(hex)) throw new InvalidConfigError(option, 'a token not used by another principal', '(redacted)')
    seen.add(hex)
    candidates.push({ digest, principal })
  }
  if (options.serviceToken !== undefined) addCandidate(options.serviceToken, { kind: 'admin' }, 'service token')
  for (const [tenant, token] of options.tenantTokens ?? new Map<string, string>()) {
    if (!TENANT_ID.test(tenant)) throw new InvalidConfigError('tenant token tenant id', '1-128 characters of A-Z a-z 0-9 . _ : @ -', tenant)
    addCandidate(token, { kind: 'tenant', tenant }, `tenant token of ${tenant}`)
  }
  if (candidates.length === 0) throw new InvalidConfigError('trust-control tokens', 'a service token or at least one tenant token', 'none')
  return {
    authenticate(req: IncomingMessage): AuthResult {
      const presented = bearerToken(req)
      // Hash even when absent, and compare against every candidate: the work is the same either way.
      const digest = sha256(presented ?? '')
      let match: Principal | undefined
      for (const candidate of candidates) {
        // never `===` here: timingSafeEqual over equal-length digests, and no early exit
        const equal = timingSafeEqual(digest, candidate.digest)
        if (equal && match === undefined) match = candidate.principal
      }
      if (presented === undefined || match === undefined) return { ok: false, status: 401, message: UNAUTHORIZED_MESSAGE }
      return { ok: true, principal: match }
    },
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}
