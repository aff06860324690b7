// Parses `--listen` values: `host:port`, `[v6]:port`, or `:port` (loopback). Port 0 picks a free port.
// `gate sidecar` and `gate api protect` also take `unix:PATH`, a Unix domain socket (http/unix-socket.ts).
import { socketPathProblem, UNIX_PREFIX } from '@gate/sdk'
import { UsageError } from '../errors.js'

export interface ListenAddress {
  host: string
  port: number
}

export const DEFAULT_LISTEN = '127.0.0.1:9090'

export function parseListenAddress(value: string, flag = '--listen'): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value.trim())
  if (m === null) throw new UsageError(`${flag} must be HOST:PORT (e.g. 127.0.0.1:9090), got "${value}"`)
  const host = m[1] ?? (m[2] === '' ? '127.0.0.1' : (m[2] as string))
  const port = Number(m[3])
  if (port > 65535) throw new UsageError(`${flag} port must be 0-65535, got ${port}`)
  return { host, port }
}

/** A URL base for a bound address (IPv6 hosts bracketed). */
export function formatBaseUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}

/** A service's listen target: TCP, or a Unix domain socket. */
export type ServiceListenAddress = ({ kind: 'tcp' } & ListenAddress) | { kind: 'unix'; path: string }

/** Parses a service `--listen` value: `unix:PATH` (absolute), or what parseListenAddress takes. */
export function parseServiceListenAddress(value: string, flag = '--listen'): ServiceListenAddress {
  if (!value.startsWith(UNIX_PREFIX)) return { kind: 'tcp', ...parseListenAddress(value, flag) }
  const path = value.slice(UNIX_PREFIX.length)
  const problem = socketPathProblem(path)
  if (problem !== undefined) throw new UsageError(`${flag} unix: must be followed by ${problem}, got "${value}"`)
  return { kind: 'unix', path }
}
