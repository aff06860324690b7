// The `--upstream` base URL: http or https, with a host, without userinfo, query or fragment (spec 01:
// an upstream URL without a host is a `Config` error). Its path is a prefix kept in front of every
// forwarded path.
import { ProtectError } from './errors.js'

export interface UpstreamTarget {
  /** scheme://host[:port], what the connection pool dials. */
  origin: string
  /** The base path without a trailing slash ('' for the root). */
  basePath: string
  /** The normalized base URL, for logs. */
  href: string
}

export function parseUpstreamUrl(text: string): UpstreamTarget {
  let url: URL
  try {
    url = new URL(text)
  } catch (err) {
    throw new ProtectError('Config', `--upstream must be an absolute http(s) URL, got "${text}"`, err)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProtectError('Config', `--upstream must use http or https, got "${url.protocol.slice(0, -1)}"`)
  }
  // WHATWG parsing gives http(s) URLs a host or fails, but `http:///x` style inputs are refused anyway
  if (url.hostname === '') throw new ProtectError('Config', `--upstream has no host: "${text}"`)
  // credentials in the URL would be sent with every forwarded request and logged (spec 03: UserinfoDenied)
  if (url.username !== '' || url.password !== '') throw new ProtectError('Config', '--upstream must not carry userinfo (UserinfoDenied)')
  if (url.search !== '' || url.hash !== '' || text.includes('?') || text.includes('#')) {
    throw new ProtectError('Config', `--upstream must not carry a query or fragment, got "${text}"`)
  }
  const basePath = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname
  return { origin: url.origin, basePath, href: `${url.origin}${basePath}` }
}
