// The flags `gate mcp serve-http` adds to `gate mcp serve`'s (docs/mcp.md, "Hosted edge"): admission
// (bearer tokens from a file or GATE_MCP_ADMISSION_TOKENS, a JWT key), the admin token, browser origins,
// Host names, and the session (in all and per caller), stream, body, idle, drain and replay limits. Tokens come from files or the
// environment; argv is readable by every local user (--admin-token is spec 03's name and is accepted,
// with GATE_ADMIN_TOKEN preferred).
import { readFile } from 'node:fs/promises'
import { checkControlToken } from '@gate/sdk/server'
import { readOAuthUrl, type AdmissionOptions, type HostedLimits } from '@gate/mcp'
import { readAllowedHosts } from './listener-hosts.js'
import { ConfigError, UsageError } from '../errors.js'

export const MCP_HTTP_FLAG_OPTIONS = {
  'control-listen': { type: 'string' },
  'admission-token-file': { type: 'string' },
  'jwt-key': { type: 'string' },
  'jwt-issuer': { type: 'string' },
  'jwt-audience': { type: 'string' },
  'admin-token': { type: 'string' },
  'allow-origin': { type: 'string', multiple: true },
  'allowed-host': { type: 'string', multiple: true },
  'edge-session-store': { type: 'string' },
  'session-idle-secs': { type: 'string' },
  'drain-secs': { type: 'string' },
  'max-sessions': { type: 'string' },
  'max-sessions-per-caller': { type: 'string' },
  'max-streams': { type: 'string' },
  'max-body-bytes': { type: 'string' },
  'replay-window': { type: 'string' },
  'shared-server': { type: 'boolean' },
  'oauth-issuer': { type: 'string' },
  'resource-url': { type: 'string' },
  'oauth-scope': { type: 'string', multiple: true },
} as const

export const MCP_HTTP_DEFAULTS = Object.freeze({
  listen: '127.0.0.1:9190',
  idleSecs: 900,
  drainSecs: 25,
  maxSessions: 1000,
  maxSessionsPerCaller: 16,
  maxStreams: 1000,
  maxBodyBytes: 4 * 1024 * 1024,
  replayWindow: 1000,
})

export const MCP_HTTP_FLAGS_HELP = `Hosted edge:
  --listen ADDR               where POST/GET/DELETE /mcp and /admin/* listen (default ${MCP_HTTP_DEFAULTS.listen}); a
                              non-loopback address needs admission and TLS
  --control-listen ADDR       where the control routes (approvals, /v1) listen (default 127.0.0.1:0)
  --admission-token-file PATH bearer tokens that admit a session, one per line (or GATE_MCP_ADMISSION_TOKENS,
                              comma-separated)
  --jwt-key PATH              admit a session with a JWT verified by this key: PEM public key, JWK or JWK Set
  --jwt-issuer ISS            required JWT iss          --jwt-audience AUD   required JWT aud
  --oauth-issuer URL          admit a session with an OAuth 2.1 access token of this authorization server
                              (its metadata and JWKS are discovered from it; https, or http on loopback);
                              GET /.well-known/oauth-protected-resource names it (RFC 9728)
  --resource-url URL          this edge's canonical URL, the audience access tokens must name (default
                              the listener's URL and /mcp; required on a non-loopback listener)
  --oauth-scope SCOPE         a scope every access token must carry (repeatable; published as
                              scopes_supported); default none
  --admin-token TOKEN         bearer token of /admin/* (GATE_ADMIN_TOKEN preferred); without it /admin is off
  --allow-origin ORIGIN       a browser origin allowed to call /mcp (repeatable; loopback origins are allowed
                              on a loopback listener)
  --allowed-host NAME         a Host name this listener answers, with any port (repeatable; required on a
                              non-loopback listener, which answers no other; a loopback listener also
                              answers localhost, 127.0.0.1 and [::1] with no port or its own)
  --edge-session-store PATH   the edge-session store (default beside --receipt-store: PATH.edge_sessions.db)
  --session-idle-secs N       a session with no request and no open stream expires after N s (default ${MCP_HTTP_DEFAULTS.idleSecs})
  --drain-secs N              on SIGTERM, how long requests in flight may finish (default ${MCP_HTTP_DEFAULTS.drainSecs})
  --max-sessions N            live sessions at once (default ${MCP_HTTP_DEFAULTS.maxSessions})
  --max-sessions-per-caller N live sessions one caller (admission token, JWT subject, or every anonymous
                              loopback client together) holds at once; past it 429 (default ${MCP_HTTP_DEFAULTS.maxSessionsPerCaller})
  --max-streams N             open GET streams at once (default ${MCP_HTTP_DEFAULTS.maxStreams})
  --max-body-bytes N          largest POST body (default ${MCP_HTTP_DEFAULTS.maxBodyBytes})
  --replay-window N           events kept per session for Last-Event-ID (default ${MCP_HTTP_DEFAULTS.replayWindow})
  --shared-server             one wrapped server process for every session instead of one per session:
                              for a stateless server; it is told no client capabilities, and what it
                              sends on its own reaches a session only while that session alone has tool
                              calls in flight on it`

export interface McpHttpSettings {
  admission: Omit<AdmissionOptions, 'open' | 'oauth'>
  /** --oauth-issuer, --resource-url and --oauth-scope: the edge as an OAuth 2.1 resource server. */
  oauth: { issuer: string; resourceUrl: string | undefined; scopes: string[] } | undefined
  adminToken: string | undefined
  allowedOrigins: string[]
  /** --allowed-host names, lower-cased (checked by readAllowedHost). */
  allowedHosts: string[]
  edgeSessionStore: string | undefined
  limits: HostedLimits
  drainMs: number
  /** --shared-server: one wrapped server process for every session. */
  sharedServer: boolean
}

function readCount(value: unknown, flag: string, fallback: number, max: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new UsageError(`${flag} must be a whole number from 1 to ${max}, got "${String(value)}"`)
  }
  return n
}

async function readText(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    throw new ConfigError(`cannot read ${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
}

function readOAuthFlags(values: Record<string, unknown>): McpHttpSettings['oauth'] {
  const issuer = values['oauth-issuer'] as string | undefined
  const resourceUrl = values['resource-url'] as string | undefined
  const scopes = (values['oauth-scope'] as string[] | undefined) ?? []
  if (issuer === undefined) {
    if (resourceUrl !== undefined || scopes.length > 0) throw new UsageError('--resource-url and --oauth-scope need --oauth-issuer')
    return undefined
  }
  try {
    readOAuthUrl(issuer, '--oauth-issuer')
    if (resourceUrl !== undefined) readOAuthUrl(resourceUrl, '--resource-url')
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  for (const scope of scopes) if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) throw new UsageError(`--oauth-scope takes one scope token (RFC 6749 §3.3), got "${scope}"`)
  return { issuer, resourceUrl, scopes }
}

export async function readMcpHttpFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<McpHttpSettings> {
  const tokenFile = values['admission-token-file'] as string | undefined
  const tokenText = tokenFile !== undefined ? await readText(tokenFile, '--admission-token-file') : (env.GATE_MCP_ADMISSION_TOKENS ?? '').replaceAll(',', '\n')
  const tokens = tokenText.split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('#'))
  // the same rule as the control token: long enough to resist guessing
  for (const token of tokens) checkControlToken(token, tokenFile === undefined ? 'GATE_MCP_ADMISSION_TOKENS' : '--admission-token-file')
  const jwtKey = values['jwt-key'] as string | undefined
  const adminToken = env.GATE_ADMIN_TOKEN ?? (values['admin-token'] as string | undefined)
  if (adminToken !== undefined) checkControlToken(adminToken, env.GATE_ADMIN_TOKEN === undefined ? '--admin-token' : 'GATE_ADMIN_TOKEN')
  const idleSecs = readCount(values['session-idle-secs'], '--session-idle-secs', MCP_HTTP_DEFAULTS.idleSecs, 86_400)
  const maxSessions = readCount(values['max-sessions'], '--max-sessions', MCP_HTTP_DEFAULTS.maxSessions, 1_000_000)
  return {
    admission: {
      tokens,
      jwt: jwtKey === undefined ? undefined : { keyText: await readText(jwtKey, '--jwt-key'), issuer: values['jwt-issuer'] as string | undefined, audience: values['jwt-audience'] as string | undefined },
    },
    oauth: readOAuthFlags(values),
    adminToken,
    allowedOrigins: (values['allow-origin'] as string[] | undefined) ?? [],
    allowedHosts: readAllowedHosts(values['allowed-host']),
    edgeSessionStore: values['edge-session-store'] as string | undefined,
    limits: {
      maxSessions,
      maxSessionsPerCaller: readCount(values['max-sessions-per-caller'], '--max-sessions-per-caller', MCP_HTTP_DEFAULTS.maxSessionsPerCaller, 1_000_000),
      maxStreams: readCount(values['max-streams'], '--max-streams', MCP_HTTP_DEFAULTS.maxStreams, 1_000_000),
      maxBodyBytes: readCount(values['max-body-bytes'], '--max-body-bytes', MCP_HTTP_DEFAULTS.maxBodyBytes, 64 * 1024 * 1024),
      idleMs: idleSecs * 1000,
      replayWindow: readCount(values['replay-window'], '--replay-window', MCP_HTTP_DEFAULTS.replayWindow, 1_000_000),
    },
    drainMs: readCount(values['drain-secs'], '--drain-secs', MCP_HTTP_DEFAULTS.drainSecs, 3600) * 1000,
    sharedServer: values['shared-server'] === true,
  }
}
