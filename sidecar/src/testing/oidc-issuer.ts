// A real OAuth 2.1 authorization server for end-to-end tests (the `oidc-provider` package) on loopback:
// dynamic client registration, the authorization code flow with PKCE, resource indicators (RFC 8707)
// giving JWT access tokens whose audience is the requested resource, signed with an ES256 key this
// helper made (so a test can also sign tokens the server would never issue). The login and consent
// steps are answered at once for the account `agent-1`, granting the requested resource scopes, so a
// client only follows redirects. Closed in teardown.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { exportJWK, generateKeyPair, type JWK } from 'jose'

// the part of oidc-provider's API this helper uses (the package ships no types)
interface Grant {
  addOIDCScope(scope: string): void
  addResourceScope(resource: string, scope: string): void
  save(): Promise<string>
}
interface Interaction {
  prompt: { name: string; details: Record<string, unknown> }
  params: Record<string, unknown>
  session?: { accountId: string }
  grantId?: string
}
interface Provider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options: { mergeWithLastSubmission: boolean }): Promise<void>
  Grant: { new (init: { accountId: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> }
}
type ProviderClass = new (issuer: string, configuration: Record<string, unknown>) => Provider

export interface OidcIssuer {
  /** The issuer identifier, `http://127.0.0.1:PORT`. */
  issuer: string
  /** The private signing key (ES256, `kid` set), for tokens the test signs itself. */
  signingKey: JWK
  kid: string
}

export const ISSUER_ACCOUNT = 'agent-1'

/** Starts the authorization server; `scope` is what a token for any resource may carry. */
export async function startOidcIssuer(t: Test, scope: string): Promise<OidcIssuer> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const kid = 'gate-test-key'
  const signingKey = { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' }
  const http = createServer()
  http.listen(0, '127.0.0.1')
  await once(http, 'listening')
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  const { default: Provider } = (await import('oidc-provider' as string)) as { default: ProviderClass }
  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    scopes: ['openid', 'offline_access', scope],
    // the one key is ES256: registered clients default to it
    clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code'], response_types: ['code'] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({ scope, audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'ES256' } } }),
      },
    },
    ttl: { AccessToken: 600, Grant: 600, Interaction: 600, Session: 600 },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
  })
  const callback = provider.callback()
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/interaction/') === true) return void interact(provider, req, res).catch(err => res.writeHead(500).end(String(err)))
    callback(req, res)
  })
  t.teardown(() => new Promise<void>(resolve => http.close(() => resolve())))
  http.closeIdleConnections?.()
  return { issuer, signingKey, kid }
}

// The user's part: logs in as agent-1, then consents to every scope and resource the client asked for.
async function interact(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res)
  if (details.prompt.name === 'login') {
    return provider.interactionFinished(req, res, { login: { accountId: ISSUER_ACCOUNT } }, { mergeWithLastSubmission: false })
  }
  const grant = details.grantId === undefined ? new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string }) : (await provider.Grant.find(details.grantId))!
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> }
  if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '))
  const grantId = await grant.save()
  return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
}
