// DNS rebinding (docs/security.md, docs/mcp.md "Transport safety and limits"): a browser page whose name
// the attacker re-points at a listener's address reaches it as same-origin, sending the attacker's name
// as Host and Origin. A guarded listener (the hosted MCP edge; the routes of `gate sidecar` and `gate api
// protect`) answers only Host names it knows it serves: on a loopback listener the loopback
// names (localhost, 127.0.0.1, [::1], and the listener's own address), with no port or the listener's;
// on any listener the --allowed-host names, with any port. A present Origin must be an allowed one
// (--allow-origin), or on a loopback listener a loopback origin. Checked before routing, for every
// route the listener guards: a route that forgot it would answer.
import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import { InvalidConfigError } from '../errors.js'

export interface RebindingGuardOptions {
  /** The listener is on a loopback address. */
  loopback: boolean
  /** The listener's address as given (`127.0.0.1`, `::1`, `localhost`), accepted as a name on a loopback listener. */
  listenHost: string
  /** Host names accepted with any port, besides the loopback ones (--allowed-host): checked by `readAllowedHost`. */
  allowedHosts: readonly string[]
  /** Browser origins allowed besides loopback ones on a loopback listener (--allow-origin). */
  allowedOrigins: readonly string[]
}

export interface RebindingGuard {
  /** Why the request is refused (403), or undefined. */
  refusal(req: Pick<IncomingMessage, 'headers'>): string | undefined
  /** The port the listener bound (known after listening; until then a Host with a port is refused). */
  bindPort(port: number): void
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']
// a DNS name or an IPv4 literal (letters, digits, hyphens, underscores, dots), or a bracketed IPv6 literal
const NAME = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])$/

/** 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host
  if (bare === 'localhost') return true
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1'
}

/** An --allowed-host value, lower-cased: a host name or IP literal (IPv6 in brackets), no port. */
export function readAllowedHost(value: string): string {
  const name = value.trim().toLowerCase()
  if (!NAME.test(name) || (name.startsWith('[') && isIP(name.slice(1, -1)) !== 6)) {
    throw new InvalidConfigError('--allowed-host', 'a host name or IP address without a port or scheme (an IPv6 address in brackets)', value)
  }
  return name
}

/** Splits a Host header into its lower-cased name and port text; undefined when it is not one. */
export function splitHostHeader(host: string): { name: string; port: string | undefined } | undefined {
  const text = host.toLowerCase()
  let name: string
  let rest: string
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close === -1) return undefined
    name = text.slice(0, close + 1)
    rest = text.slice(close + 1)
  } else {
    const colon = text.indexOf(':')
    name = colon === -1 ? text : text.slice(0, colon)
    rest = colon === -1 ? '' : text.slice(colon)
  }
  if (!NAME.test(name)) return undefined
  if (rest === '') return { name, port: undefined }
  return /^:\d{1,5}$/.test(rest) ? { name, port: rest.slice(1) } : undefined
}

export function createRebindingGuard(options: RebindingGuardOptions): RebindingGuard {
  const allowed = new Set(options.allowedHosts.map(readAllowedHost))
  const own = options.listenHost.includes(':') ? `[${options.listenHost.toLowerCase()}]` : options.listenHost.toLowerCase()
  const loopbackNames = new Set(options.loopback ? [...LOOPBACK_NAMES, own] : [])
  const origins = new Set(options.allowedOrigins)
  let port: string | undefined

  function hostRefusal(host: string | undefined): string | undefined {
    const split = host === undefined ? undefined : splitHostHeader(host)
    if (split !== undefined) {
      if (allowed.has(split.name)) return undefined
      // another port on a loopback name is another local service's address, not this listener's
      if (loopbackNames.has(split.name) && (split.port === undefined || split.port === port)) return undefined
    }
    const accepted = options.loopback ? `a loopback name${port === undefined ? '' : ` (port ${port} or none)`} or an --allowed-host name` : 'an --allowed-host name'
    return `Host ${host ?? '(none)'} is not allowed: this listener answers ${accepted}`
  }

  return {
    bindPort(bound) {
      port = String(bound)
    },
    refusal(req) {
      const origin = req.headers.origin
      if (origin !== undefined && !origins.has(origin)) {
        let originHost: string | undefined
        try {
          originHost = new URL(origin).hostname
        } catch {
          originHost = undefined
        }
        if (!options.loopback || originHost === undefined || !isLoopbackHost(originHost)) return `Origin ${origin} is not allowed (--allow-origin)`
      }
      return hostRefusal(req.headers.host)
    },
  }
}
