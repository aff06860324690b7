// End to end: `gate mcp serve-http --oauth-issuer` as an OAuth 2.1 resource server (MCP authorization
// specification 2025-11-25) in front of a real authorization server (oidc-provider, started here). The
// official SDK client finds everything on its own: the 401's resource_metadata, the protected-resource
// metadata (RFC 9728), the authorization server's metadata, dynamic registration, the authorization
// code flow with PKCE for the edge's resource (RFC 8707); its access token then admits a session, and
// the capability token still decides every call. Tokens the authorization server would never issue are
// signed here: a wrong audience, an expired token and an unknown signing key get 401, a missing scope
// 403, each with the challenge that points at the metadata.
import t from 'tap'
import { generateKeyPair, SignJWT, importJWK, type JWK } from 'jose'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { scopedSignalFetch } from '@gate/mcp'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { initializeMessage, rawPost, rawRequest, startGateMcpHttp } from '../testing/mcp-http-session.js'
import { ISSUER_ACCOUNT, startOidcIssuer } from '../testing/oidc-issuer.js'

const SCOPE = 'mcp:tools'
const REDIRECT = 'http://127.0.0.1:9/callback'

/** An agent's OAuth state, in memory; the authorization URL is kept for the test to follow. */
class AgentOAuth implements OAuthClientProvider {
  authorizationUrl: URL | undefined
  #client: OAuthClientInformationMixed | undefined
  #tokens: OAuthTokens | undefined
  #verifier = ''
  get redirectUrl() {
    return REDIRECT
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'gate-e2e-agent', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }
  clientInformation() {
    return this.#client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.#client = info
  }
  tokens() {
    return this.#tokens
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier
  }
  codeVerifier() {
    return this.#verifier
  }
}

/** The user's browser: follows the authorization server's redirects (with its cookies) to the code. */
async function authorize(url: URL): Promise<string> {
  const cookies = new Map<string, string>()
  let next = url.href
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1))
    }
    await response.body?.cancel()
    const location = response.headers.get('location')
    if (location === null) throw new Error(`the authorization server answered ${response.status} without a redirect at ${next}`)
    const target = new URL(location, next)
    if (target.href.startsWith(REDIRECT)) {
      const code = target.searchParams.get('code')
      if (code === null) throw new Error(`the authorization ended without a code: ${target.search}`)
      return code
    }
    next = target.href
  }
  throw new Error('too many redirects')
}

t.test('the SDK client signs in with OAuth and calls a tool; foreign, expired and unknown-key tokens are refused', async t => {
  const as = await startOidcIssuer(t, SCOPE)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--oauth-issuer', as.issuer, '--oauth-scope', SCOPE, '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH])
  const resource = gate.url
  const metadataUrl = `${gate.base}/.well-known/oauth-protected-resource`

  const metadata = await rawRequest(metadataUrl, 'GET')
  t.equal(metadata.status, 200)
  t.same(metadata.json(), { resource, authorization_servers: [as.issuer], scopes_supported: [SCOPE], bearer_methods_supported: ['header'] }, 'RFC 9728 metadata at the root well-known path')
  t.equal((await rawRequest(`${metadataUrl}/mcp`, 'GET')).status, 200, 'and at the path-suffixed one')
  const anonymous = await rawPost(gate.url, initializeMessage())
  t.equal(anonymous.status, 401)
  t.equal(anonymous.headers.get('www-authenticate'), `Bearer resource_metadata="${metadataUrl}", scope="${SCOPE}"`, 'the 401 points at the metadata')

  // the SDK client's own flow: 401 → metadata → registration → authorization (PKCE) → token
  const oauth = new AgentOAuth()
  const first = new Client({ name: 'gate-e2e-oauth', version: '1.0.0' })
  await t.rejects(first.connect(new StreamableHTTPClientTransport(new URL(gate.url), { authProvider: oauth, fetch: scopedSignalFetch() })), { message: 'Unauthorized' }, 'the first connect needs the user')
  t.ok(oauth.authorizationUrl?.href.startsWith(`${as.issuer}/auth?`), 'the client was sent to the authorization server')
  t.equal(oauth.authorizationUrl?.searchParams.get('resource'), resource, 'for this edge as the resource (RFC 8707)')
  const code = await authorize(oauth.authorizationUrl!)
  const finishing = new StreamableHTTPClientTransport(new URL(gate.url), { authProvider: oauth, fetch: scopedSignalFetch() })
  await finishing.finishAuth(code)
  const client = new Client({ name: 'gate-e2e-oauth', version: '1.0.0' })
  t.teardown(() => client.close())
  await client.connect(new StreamableHTTPClientTransport(new URL(gate.url), { authProvider: oauth, fetch: scopedSignalFetch() }))
  t.match(await client.callTool({ name: 'echo', arguments: { text: 'signed in' } }), { content: [{ text: 'echo: signed in' }] }, 'the access token admits a session')
  const denied = (await client.callTool({ name: 'write_note', arguments: { path: '/x', content: 'y' } })) as CallToolResult
  t.match(denied, { isError: true, _meta: { gate: { verdict: 'deny' } } }, 'the capability token still decides every call')

  // tokens signed here, each refused for one reason
  const resourceKey = await importJWK(as.signingKey as JWK, 'ES256')
  const now = Math.floor(Date.now() / 1000)
  const token = (claims: Record<string, unknown>, key = resourceKey, kid = as.kid) =>
    new SignJWT({ scope: SCOPE, ...claims }).setProtectedHeader({ alg: 'ES256', kid }).setIssuer(as.issuer).setSubject(ISSUER_ACCOUNT).setIssuedAt(now).sign(key)
  const attempt = async (bearer: string) => rawPost(gate.url, initializeMessage(), { authorization: `Bearer ${bearer}` })
  t.equal((await attempt(await token({ aud: resource, exp: now + 300 }))).status, 200, 'a token of the issuer for this resource admits')
  for (const [why, bearer] of [
    ['a wrong audience', await token({ aud: 'https://other.example/mcp', exp: now + 300 })],
    ['an expired token', await token({ aud: resource, exp: now - 60 })],
    ['an unknown signing key', await token({ aud: resource, exp: now + 300 }, (await generateKeyPair('ES256')).privateKey, 'not-published')],
  ] as const) {
    const refused = await attempt(bearer)
    t.equal(refused.status, 401, `${why}: 401`)
    t.equal(refused.headers.get('www-authenticate'), `Bearer error="invalid_token", resource_metadata="${metadataUrl}"`, `${why}: invalid_token, pointing at the metadata`)
    t.match(refused.json(), { error: 'gate_unauthorized' })
  }
  const narrow = await attempt(await token({ aud: resource, exp: now + 300, scope: 'other' }))
  t.equal(narrow.status, 403, 'a token without the required scope: 403')
  t.equal(narrow.headers.get('www-authenticate'), `Bearer error="insufficient_scope", resource_metadata="${metadataUrl}", scope="${SCOPE}"`)
})

t.test('--oauth-issuer refuses an http issuer off loopback, and a non-loopback listener without --resource-url', async t => {
  const { runGate } = await import('../testing/spawn-gate.js')
  const plain = await runGate(['mcp', 'serve-http', '--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--oauth-issuer', 'http://auth.example', '--', process.execPath, FIXTURE_SERVER_PATH])
  t.equal(plain.code, 2)
  t.match(plain.stderr, /--oauth-issuer must be an https URL \(http only on a loopback host/)
  const remote = await runGate(['mcp', 'serve-http', '--listen', '0.0.0.0:0', '--allowed-host', 'mcp.example', '--allow-plaintext-remote', '--allow-ephemeral-receipts', '--oauth-issuer', 'https://auth.example', '--', process.execPath, FIXTURE_SERVER_PATH])
  t.equal(remote.code, 2)
  t.match(remote.stderr, /needs --resource-url/)
})
