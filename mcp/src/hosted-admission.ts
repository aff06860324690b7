// Session admission of the hosted edge (spec 03, Authentication 4): a bearer token from the operator's
// list, or a JWT verified with `jose` against the operator's key, admits a session. Admission says who
// may hold a session; the capability token still decides every call. Tokens are compared by SHA-256
// digest in constant time and only digests are kept; a principal is named by a hash, never the token.
// An OAuth 2.1 access token (oauth-resource.ts) admits too, and its refusals carry the challenge that
// points a client at the protected-resource metadata.
import { createHash, createPublicKey, timingSafeEqual } from 'node:crypto'
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWK, type JWTVerifyGetKey } from 'jose'
import { McpConfigError } from './errors.js'
import type { OAuthResourceServer } from './oauth-resource.js'

export interface JwtAdmission {
  /** A PEM public key (SPKI), a JWK, or a JWK Set, as file text. */
  keyText: string
  issuer?: string
  audience?: string
}

export interface AdmissionOptions {
  /** Bearer tokens that admit a session. */
  tokens?: readonly string[]
  jwt?: JwtAdmission
  /** OAuth 2.1 access tokens of the configured authorization server (--oauth-issuer). */
  oauth?: OAuthResourceServer
  /** No admission configured and a loopback listener: every session is admitted. */
  open?: boolean
}

/** A refusal: 401 (absent or invalid token) or 403 (an OAuth token without a required scope), with its `WWW-Authenticate`. */
export type AdmissionResult = { ok: true; principal: string } | { ok: false; reason: string; status: 401 | 403; challenge: string }

export interface Admission {
  readonly mode: 'open' | 'required'
  /** Reads `Authorization: Bearer …`. */
  admit(authorization: string | undefined): Promise<AdmissionResult>
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/
// the algorithms an operator's key can verify; `none` and HMAC are never accepted
const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** Builds the admission check; a JWT key that cannot be read is a configuration error. */
export async function createAdmission(options: AdmissionOptions): Promise<Admission> {
  const tokens = (options.tokens ?? []).map(digest)
  const key = options.jwt === undefined ? undefined : await readJwtKey(options.jwt.keyText)
  const { oauth } = options
  // spec 03: absent and unknown tokens get the same answer; with OAuth it names the metadata (RFC 9728 §5.1)
  const refused = (reason: string): AdmissionResult => ({ ok: false, reason, status: 401, challenge: oauth?.challenge() ?? 'Bearer' })
  if (tokens.length === 0 && key === undefined && oauth === undefined) {
    if (options.open !== true) throw new McpConfigError('a hosted edge on a non-loopback address needs admission: bearer tokens or a JWT key')
    return { mode: 'open', admit: async () => ({ ok: true, principal: 'open' }) }
  }
  return {
    mode: 'required',
    async admit(authorization) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
      if (m === null) return refused('missing bearer token')
      const presented = m[1]!
      const hash = digest(presented)
      // every listed digest is compared, so the time taken does not say which one matched
      let matched = false
      for (const token of tokens) matched = timingSafeEqual(hash, token) || matched
      if (matched) return { ok: true, principal: `token:${hash.toString('hex').slice(0, 32)}` }
      let oauthRefusal: AdmissionResult | undefined
      if (oauth !== undefined && JWT_SHAPE.test(presented)) {
        const verified = await oauth.verify(presented)
        if (verified.ok) return verified
        oauthRefusal = { ok: false, reason: verified.reason, status: verified.status, challenge: oauth.challenge(verified) }
        if (key === undefined) return oauthRefusal
      }
      if (key !== undefined && JWT_SHAPE.test(presented)) {
        try {
          const { payload } = await jwtVerify(presented, key, { issuer: options.jwt?.issuer, audience: options.jwt?.audience, algorithms: JWT_ALGORITHMS })
          if (typeof payload.sub !== 'string' || payload.sub === '') return oauthRefusal ?? refused('the JWT has no sub')
          return { ok: true, principal: `jwt:${digest(`${payload.iss ?? ''}\n${payload.sub}`).toString('hex').slice(0, 32)}` }
        } catch (err) {
          return oauthRefusal ?? refused(`JWT refused: ${(err as Error).message}`)
        }
      }
      return refused('unknown bearer token')
    },
  }
}

// Every key form becomes a local JWK Set, so the token's own `alg` (among JWT_ALGORITHMS) picks how the
// key is used; a PEM key is converted by node:crypto.
async function readJwtKey(text: string): Promise<JWTVerifyGetKey> {
  const trimmed = text.trim()
  try {
    if (trimmed.startsWith('-----BEGIN')) {
      const key = createPublicKey(trimmed)
      if (key.type !== 'public') throw new Error('not a public key')
      return createLocalJWKSet({ keys: [key.export({ format: 'jwk' }) as JWK] })
    }
    const parsed = JSON.parse(trimmed) as JWK | JSONWebKeySet
    const keys = 'keys' in parsed && Array.isArray(parsed.keys) ? parsed.keys : [parsed as JWK]
    for (const jwk of keys) if (jwk.d !== undefined || jwk.kty === 'oct') throw new Error('a private or symmetric key is not a verification key')
    return createLocalJWKSet({ keys })
  } catch (err) {
    throw new McpConfigError(`cannot read the JWT verification key: ${(err as Error).message}`, err)
  }
}
