// GateMiddlewareOptions: the one options type of the middleware core and every adapter. Validated and
// merged with DEFAULTS once, at construction (STYLE, Options); inner code only sees the resolved object.
import { InvalidConfigError } from '../errors.js'
import type { CallerIdentity } from '../types.js'
import { parsePublicKey } from '../protocol/keys.js'
import type { GateRequestInput } from './gate-types.js'
import { UnknownOptionError } from '../errors.js'
import { socketPathProblem, UNIX_PREFIX } from './sidecar-url.js'
import { checkControlToken } from '../server/control-token-rule.js'

/** A custom caller identity (hashes only), or null/undefined for the built-in chain. */
export type IdentifyHook = (input: GateRequestInput) => CallerIdentity | null | undefined | Promise<CallerIdentity | null | undefined>

/** Options of the middleware core and every adapter; every field optional. */
export interface GateMiddlewareOptions {
  /**
   * Sidecar base URL: `http://host:port`, `https://…`, or `unix:/absolute/path.sock` for a sidecar
   * started with `--listen unix:PATH` (cheapest: no loopback TCP; Node only, the edge runtime needs
   * http). Default: `GATE_SIDECAR_URL`, else `http://127.0.0.1:9090` (spec 02, transport rule 2).
   */
  sidecarUrl?: string
  /** Deadline of one sidecar call, response headers and body together. Default 5000. */
  timeoutMs?: number
  /**
   * What to do when the sidecar cannot be asked (unreachable, timed out). Default `'deny'` (fail closed,
   * spec 02). `'allow'` passes the request and marks the response `X-Gate-Fail-Open: <code>`; an answer
   * that fails validation or a receipt that fails verification is never passed.
   */
  onSidecarError?: 'deny' | 'allow'
  /**
   * Receipt signature check (docs/performance.md, "The middleware's own cost", has what each costs).
   * Default `'local'` (spec 02): verified here against `sidecarPublicKey`, or the key read once from
   * `GET /gate/live` on first use; a receipt that does not verify answers 502 gate_invalid_receipt.
   * `'sidecar'`: asks `POST /gate/verify` instead, a second round trip per request, and trusts the
   * sidecar's answer about its own signature. `'off'`: the receipt is still bound to the request (id,
   * method, caller, content), but its signature is not checked, so whoever can answer on the sidecar's
   * address can forge allows.
   */
  verifyReceipts?: 'local' | 'sidecar' | 'off'
  /** The sidecar signer's public key (wire form), pinned. Default: read once from `/gate/live`. */
  sidecarPublicKey?: string | null
  /** Largest request body Gate reads and hashes; larger answers 413. Default 10 MiB. */
  maxBodyBytes?: number
  /**
   * Request headers passed to the sidecar in `headers` (lowercase names). Credential headers
   * (authorization, cookie, x-api-key, proxy-authorization, x-gate-capability, set-cookie) are refused.
   * Default: accept, content-type, host, user-agent, x-request-id.
   */
  forwardHeaders?: readonly string[]
  /** Cookie whose value identifies the caller when no bearer token or API key is presented (hashed). Default none. */
  identityCookie?: string | null
  /** Custom caller identity; return null/undefined to fall back to the built-in chain. Must return hashes only. */
  identify?: IdentifyHook | null
  /** Paths that bypass Gate entirely (exact strings or RegExps), e.g. health checks. Default none. */
  skip?: readonly (string | RegExp)[]
  /** Sidecar connections kept alive (Node transport). Default 16. */
  connections?: number
  /**
   * The sidecar's control token, sent as `Authorization: Bearer` on /gate/evaluate. Only an
   * authenticated caller may name a token by `capability_id` (docs/security.md). Default:
   * `GATE_SIDECAR_TOKEN`, else none. At least 16 visible ASCII characters.
   */
  sidecarToken?: string | null
}

/** The options after validation and defaults: what inner code receives. */
export interface ResolvedGateOptions {
  readonly sidecarUrl: string
  readonly timeoutMs: number
  readonly onSidecarError: 'deny' | 'allow'
  readonly verifyReceipts: 'local' | 'sidecar' | 'off'
  readonly sidecarPublicKey: string | null
  readonly maxBodyBytes: number
  readonly forwardHeaders: readonly string[]
  readonly identityCookie: string | null
  readonly identify: IdentifyHook | null
  readonly skip: readonly (string | RegExp)[]
  readonly connections: number
  readonly sidecarToken: string | null
}

/** The defaults (spec 02: 5000 ms, 127.0.0.1:9090, fail closed; 10 MiB matches the evaluate read limit). */
export const DEFAULTS: ResolvedGateOptions = Object.freeze({
  sidecarUrl: 'http://127.0.0.1:9090',
  timeoutMs: 5000,
  onSidecarError: 'deny',
  verifyReceipts: 'local',
  sidecarPublicKey: null,
  maxBodyBytes: 10 * 1024 * 1024,
  forwardHeaders: Object.freeze(['accept', 'content-type', 'host', 'user-agent', 'x-request-id']),
  identityCookie: null,
  identify: null,
  skip: Object.freeze([]),
  connections: 16,
  sidecarToken: null,
})

/** Never sent to the sidecar in `headers`: raw credentials and Gate's own credential header (spec 02, Authentication). */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'x-api-key',
  'proxy-authorization',
  'x-gate-capability',
  'set-cookie',
])

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/
const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const KNOWN = Object.keys(DEFAULTS)

/** Validates `options`, applies the environment and DEFAULTS, and returns the frozen result. */
export function resolveGateOptions(options: GateMiddlewareOptions = {}, env: Record<string, string | undefined> = readEnv()): ResolvedGateOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidConfigError('options', 'an object', options)
  for (const key of Object.keys(options)) if (!KNOWN.includes(key)) throw new UnknownOptionError(key, KNOWN)
  const o = options as Record<string, unknown>
  const pick = <K extends keyof ResolvedGateOptions>(k: K): unknown => (o[k] === undefined ? DEFAULTS[k] : o[k])

  const fromEnv = env.GATE_SIDECAR_URL !== undefined && env.GATE_SIDECAR_URL !== ''
  const sidecarUrl = o.sidecarUrl !== undefined ? checkUrl('sidecarUrl', o.sidecarUrl) : fromEnv ? checkUrl('GATE_SIDECAR_URL', env.GATE_SIDECAR_URL) : DEFAULTS.sidecarUrl

  const timeoutMs = checkPositiveInteger('timeoutMs', pick('timeoutMs'))
  const maxBodyBytes = checkPositiveInteger('maxBodyBytes', pick('maxBodyBytes'))
  const connections = checkPositiveInteger('connections', pick('connections'))
  const onSidecarError = checkOneOf('onSidecarError', pick('onSidecarError'), ['deny', 'allow'] as const)
  const verifyReceipts = checkOneOf('verifyReceipts', pick('verifyReceipts'), ['local', 'sidecar', 'off'] as const)

  const key = pick('sidecarPublicKey')
  if (key !== null && (typeof key !== 'string' || 'error' in parsePublicKey(key))) {
    throw new InvalidConfigError('sidecarPublicKey', 'a public key in wire form (64 hex, p256:… or p384:…)', key)
  }

  const forward = pick('forwardHeaders')
  if (!Array.isArray(forward)) throw new InvalidConfigError('forwardHeaders', 'an array of lowercase header names', forward)
  for (const name of forward) {
    if (typeof name !== 'string' || !HEADER_NAME.test(name)) throw new InvalidConfigError('forwardHeaders[]', 'a lowercase header name', name)
    if (CREDENTIAL_HEADERS.has(name)) throw new InvalidConfigError('forwardHeaders', `free of credential headers (${[...CREDENTIAL_HEADERS].join(', ')})`, name)
  }

  const cookie = pick('identityCookie')
  if (cookie !== null && (typeof cookie !== 'string' || !COOKIE_NAME.test(cookie))) throw new InvalidConfigError('identityCookie', 'a cookie name or null', cookie)

  const identify = pick('identify')
  if (identify !== null && typeof identify !== 'function') throw new InvalidConfigError('identify', 'a function or null', identify)

  const fromTokenEnv = env.GATE_SIDECAR_TOKEN !== undefined && env.GATE_SIDECAR_TOKEN !== ''
  const sidecarToken =
    o.sidecarToken !== undefined && o.sidecarToken !== null
      ? checkControlToken(o.sidecarToken, 'sidecarToken')
      : o.sidecarToken === undefined && fromTokenEnv
        ? checkControlToken(env.GATE_SIDECAR_TOKEN, 'GATE_SIDECAR_TOKEN')
        : null

  const skip = pick('skip')
  if (!Array.isArray(skip)) throw new InvalidConfigError('skip', 'an array of paths or RegExps', skip)
  for (const s of skip) {
    if (!(s instanceof RegExp) && (typeof s !== 'string' || !s.startsWith('/'))) throw new InvalidConfigError('skip[]', 'a path starting with "/" or a RegExp', s)
  }

  return Object.freeze({
    sidecarUrl,
    timeoutMs,
    onSidecarError,
    verifyReceipts,
    sidecarPublicKey: key as string | null,
    maxBodyBytes,
    forwardHeaders: Object.freeze([...(forward as string[])]),
    identityCookie: cookie as string | null,
    identify: identify as IdentifyHook | null,
    skip: Object.freeze([...(skip as (string | RegExp)[])]),
    connections,
    sidecarToken,
  })
}

function checkUrl(option: string, value: unknown): string {
  if (typeof value === 'string' && value.startsWith(UNIX_PREFIX)) {
    const problem = socketPathProblem(value.slice(UNIX_PREFIX.length))
    if (problem !== undefined) throw new InvalidConfigError(option, `unix: followed by ${problem}`, value)
    return value
  }
  let url: URL
  try {
    url = new URL(String(value))
  } catch {
    throw new InvalidConfigError(option, 'an http:// or https:// URL, or unix:/path', value)
  }
  if (typeof value !== 'string' || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new InvalidConfigError(option, 'an http:// or https:// URL without credentials, query or fragment', value)
  }
  return url.href.replace(/\/+$/, '')
}

function checkPositiveInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new InvalidConfigError(option, 'a positive integer', value)
  return value
}

function checkOneOf<T extends string>(option: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) throw new InvalidConfigError(option, `one of ${allowed.map(a => `"${a}"`).join(', ')}`, value)
  return value as T
}

function readEnv(): Record<string, string | undefined> {
  // no static `process` reference: this module also loads on the edge runtime
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {}
}

