// Which Host names Gate's own routes answer on a listener (DNS rebinding, docs/security.md). A page an
// attacker serves under a name re-pointed at 127.0.0.1 reaches a loopback sidecar as same-origin; the
// sidecar's evaluate, verify and approval routes need no credential, so on a loopback listener they
// answer only loopback names (with no port or the listener's own) and --allowed-host names, and a
// browser Origin only when it is a loopback one. A non-loopback listener (a container's 0.0.0.0, reached
// by a service name) checks only when --allowed-host names its names. A Unix socket is out of a
// browser's reach and is not checked.
import { createRebindingGuard, isLoopbackHost, type RebindingGuard } from '@gate/sdk/server'
import type { ServiceListenAddress } from '../config/listen-address.js'

export function listenerHostGuard(listen: ServiceListenAddress, allowedHosts: readonly string[]): RebindingGuard | undefined {
  if (listen.kind !== 'tcp') return undefined
  const loopback = isLoopbackHost(listen.host)
  if (!loopback && allowedHosts.length === 0) return undefined
  return createRebindingGuard({ loopback, listenHost: listen.host, allowedHosts, allowedOrigins: [] })
}
