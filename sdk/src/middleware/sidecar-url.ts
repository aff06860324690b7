// Where the sidecar is: `http://host:port[/base]`, `https://…`, or `unix:/absolute/path` for a Unix
// domain socket (`gate sidecar --listen unix:PATH`), which skips the loopback TCP stack on both sides.

/** A sidecar address, parsed. */
export type SidecarTarget =
  | { kind: 'unix'; path: string }
  | { kind: 'http'; host: string; port: number; basePath: string; hostHeader: string }
  | { kind: 'https' }

export const UNIX_PREFIX = 'unix:'

/** Longest socket path Linux accepts (sun_path is 108 bytes with its terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107

/** Parses a URL that options.ts already validated. */
export function parseSidecarUrl(sidecarUrl: string): SidecarTarget {
  if (sidecarUrl.startsWith(UNIX_PREFIX)) return { kind: 'unix', path: sidecarUrl.slice(UNIX_PREFIX.length) }
  const url = new URL(sidecarUrl)
  if (url.protocol === 'https:') return { kind: 'https' }
  // IPv6 hosts come bracketed in URL.hostname; the socket wants them bare
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  return { kind: 'http', host, port: url.port === '' ? 80 : Number(url.port), basePath: url.pathname.replace(/\/+$/, ''), hostHeader: url.host }
}

/** Why `path` cannot name the sidecar's socket, or undefined when it can. */
export function socketPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'an absolute path'
  if (path.includes('\0')) return 'a path without NUL bytes'
  if (new TextEncoder().encode(path).length > MAX_SOCKET_PATH_BYTES) return `a path of at most ${MAX_SOCKET_PATH_BYTES} bytes`
  return undefined
}
