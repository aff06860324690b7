// The hosted edge as an OAuth 2.1 resource server (MCP authorization specification, 2025-11-25): its
// protected-resource metadata (RFC 9728) names the authorization server; an access token is a JWT that
// authorization server signed (its JWKS, found through its metadata: RFC 8414, else OpenID discovery),
// whose audience is this edge's canonical URL (RFC 8707), unexpired, carrying the required scopes. The
// token admits a session, its issuer and subject are the caller (admission and the per-caller cap);
// the capability token still decides every call. Gate fetches from the configured issuer only: its
// metadata and a JWKS on the same origin. An `http://` issuer is accepted on a loopback host alone.
import { createHash } from 'node:crypto'
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose'
import { McpConfigError } from './errors.js'
import { isLoopbackHost } from '@gate/sdk/server'

export interface OAuthResourceOptions {
  /** The authorization server's issuer identifier (`--oauth-issuer`). */
  issuer: string
  /** Scopes every token must carry (`--oauth-scope`), published as `scopes_supported`. */
  scopes: readonly string[]
}

/** Why a presented token does not admit: 401 (invalid token) or 403 (a scope it lacks). */
export type OAuthRefusal = { status: 401 | 403; error: 'invalid_token' | 'insufficient_scope'; reason: string }

export interface OAuthResourceServer {
  readonly issuer: string
  readonly scopes: readonly string[]
  /**
   * Sets this edge's canonical URL (`--resource-url`, or derived from the bound listener): the audience
   * tokens must name and the metadata's `resource`. Until it is set every token is refused.
   */
  bindResource(url: string): void
  /** The canonical URL, once bound. */
  resource(): string | undefined
  /** Where the metadata is served (RFC 9728 §3: the root well-known path). */
  metadataUrl(): string | undefined
  /** The protected-resource metadata document. */
  metadata(): Record<string, unknown>
  /** A token's principal (issuer and subject, hashed), or why it is refused. */
  verify(token: string): Promise<{ ok: true; principal: string } | ({ ok: false } & OAuthRefusal)>
  /** The `WWW-Authenticate` value of a refusal (RFC 6750 §3, RFC 9728 §5.1). */
  challenge(refusal?: OAuthRefusal): string
}

// the algorithms an authorization server signs access tokens with; `none` and HMAC are never accepted
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
const METADATA_TIMEOUT_MS = 10_000

/** Checks an issuer or resource URL: https, or http on a loopback host only; no query or fragment. */
export function readOAuthUrl(value: string, flag: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new McpConfigError(`${flag} must be an absolute URL, got "${value}"`)
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new McpConfigError(`${flag} must be an https URL (http only on a loopback host, for tests and local development), got "${value}"`)
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') throw new McpConfigError(`${flag} must have no query, fragment or user info, got "${value}"`)
  return url
}

/**
 * Reads the authorization server's metadata (RFC 8414's well-known path, then OpenID discovery's) and
 * builds the resource server; a server that cannot be reached or whose metadata does not fit fails.
 */
export async function createOAuthResourceServer(options: OAuthResourceOptions): Promise<OAuthResourceServer> {
  const issuer = readOAuthUrl(options.issuer, '--oauth-issuer')
  let resource: URL | undefined
  const metadata = await discoverIssuer(issuer, options.issuer)
  const jwksUri = readOAuthUrl(String(metadata.jwks_uri ?? ''), `the jwks_uri of ${options.issuer}`)
  // egress goes to the configured issuer only
  if (jwksUri.origin !== issuer.origin) throw new McpConfigError(`the jwks_uri of ${options.issuer} (${jwksUri.href}) is not on the issuer's origin: Gate fetches keys from the configured issuer only`)
  // cached, and fetched again (at most every 30 s) for a key id it does not hold: a rotation is picked up
  const keys: JWTVerifyGetKey = createRemoteJWKSet(jwksUri, { timeoutDuration: METADATA_TIMEOUT_MS })
  const metadataUrl = () => (resource === undefined ? undefined : `${resource.origin}/.well-known/oauth-protected-resource`)
  const scopes = [...options.scopes]
  const challenge = (refusal?: OAuthRefusal) => {
    const parts = [`resource_metadata="${metadataUrl() ?? ''}"`]
    if (refusal !== undefined) parts.unshift(`error="${refusal.error}"`)
    if (refusal?.error === 'insufficient_scope' || (refusal === undefined && scopes.length > 0)) parts.push(`scope="${scopes.join(' ')}"`)
    return `Bearer ${parts.join(', ')}`
  }
  return {
    issuer: options.issuer,
    scopes,
    bindResource(url) {
      resource = readOAuthUrl(url, '--resource-url')
    },
    resource: () => resource?.href,
    metadataUrl,
    metadata: () => ({ resource: resource?.href, authorization_servers: [options.issuer], scopes_supported: scopes, bearer_methods_supported: ['header'] }),
    challenge,
    async verify(token) {
      if (resource === undefined) return { ok: false, status: 401, error: 'invalid_token', reason: 'the edge is not serving yet' }
      let payload
      try {
        ;({ payload } = await jwtVerify(token, keys, { issuer: options.issuer, audience: resource.href, algorithms: ALGORITHMS, requiredClaims: ['exp'] }))
      } catch (err) {
        return { ok: false, status: 401, error: 'invalid_token', reason: tokenProblem(err) }
      }
      if (typeof payload.sub !== 'string' || payload.sub === '') return { ok: false, status: 401, error: 'invalid_token', reason: 'the access token has no sub' }
      const granted = new Set(typeof payload.scope === 'string' ? payload.scope.split(' ') : Array.isArray(payload.scp) ? payload.scp.map(String) : [])
      const missing = scopes.filter(scope => !granted.has(scope))
      if (missing.length > 0) return { ok: false, status: 403, error: 'insufficient_scope', reason: `the access token lacks ${missing.join(' ')}` }
      const principal = createHash('sha256').update(`${options.issuer}\n${payload.sub}`, 'utf8').digest('hex').slice(0, 32)
      return { ok: true, principal: `oauth:${principal}` }
    },
  }
}

async function discoverIssuer(issuer: URL, configured: string): Promise<Record<string, unknown>> {
  // RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path
  const path = issuer.pathname === '/' ? '' : issuer.pathname.replace(/\/$/, '')
  const candidates = [`${issuer.origin}/.well-known/oauth-authorization-server${path}`, `${issuer.origin}${path}/.well-known/openid-configuration`]
  const failures: string[] = []
  for (const url of candidates) {
    let response: Response
    try {
      response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(METADATA_TIMEOUT_MS) })
    } catch (err) {
      failures.push(`${url}: ${(err as Error).message}`)
      continue
    }
    if (response.status !== 200) {
      await response.body?.cancel()
      failures.push(`${url}: HTTP ${response.status}`)
      continue
    }
    const metadata = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined
    if (metadata === undefined || typeof metadata !== 'object') throw new McpConfigError(`the metadata at ${url} is not a JSON object`)
    // RFC 8414 §3.3: the issuer in the metadata is the configured one, exactly
    if (metadata.issuer !== configured) throw new McpConfigError(`the metadata at ${url} names issuer ${JSON.stringify(metadata.issuer)}, not ${configured}`)
    return metadata
  }
  throw new McpConfigError(`cannot read the authorization server metadata of ${configured}: ${failures.join('; ')}`)
}

function tokenProblem(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'the access token has expired'
  if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud') return 'the access token is not for this resource (aud)'
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'the access token is signed by a key the authorization server does not publish'
  return `the access token is invalid: ${(err as Error).message}`
}
