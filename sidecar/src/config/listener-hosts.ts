// The Host names a listener answers (DNS rebinding, docs/security.md): `--allowed-host NAME`, repeatable,
// a host name or IP address without port or scheme. Read the same way by `gate sidecar`, `gate api
// protect` and `gate mcp serve-http`.
import type { ParseArgsConfig } from 'node:util'
import { readAllowedHost } from '@gate/sdk/server'
import { UsageError } from '../errors.js'

export const LISTENER_HOST_FLAG_OPTIONS = {
  'allowed-host': { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options']

export const LISTENER_HOST_FLAGS_HELP = `  --allowed-host NAME         a Host name Gate's own routes answer besides the loopback names, with any
                              port (repeatable); on a loopback listener they answer only localhost,
                              127.0.0.1, [::1] and their own address (DNS rebinding); a non-loopback
                              listener checks Host only when this is given`

/** The --allowed-host names, lower-cased; a malformed one is a usage error. */
export function readAllowedHosts(value: unknown): string[] {
  const names = (value as string[] | undefined) ?? []
  try {
    return names.map(readAllowedHost)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}
