// The edge core: `fetch` and the precompiled validators of @gate/schemas/standalone. Nothing in this
// module's import graph touches node: modules, undici or ajv (checked by edge.test.ts). A `unix:`
// sidecar is reached with the socket transport where node:net exists (Next.js route handlers on the
// Node runtime); the edge runtime itself has no sockets and keeps fetch over TCP.
import { validate } from '@gate/schemas/standalone'
import { InvalidConfigError } from '../errors.js'
import { createFetchTransport } from './fetch-transport.js'
import { createGateCoreOn } from './gate-core.js'
import type { GateCore } from './gate-types.js'
import type { GateMiddlewareOptions, ResolvedGateOptions } from './options.js'
import type { SidecarTransport } from './sidecar-client.js'
import { parseSidecarUrl } from './sidecar-url.js'
import { createSocketTransport, loadNet } from './socket-transport.js'

/** Creates the middleware core for the edge runtime (or any runtime with `fetch`). */
export function createEdgeGateCore(options?: GateMiddlewareOptions): GateCore {
  return createGateCoreOn({ createTransport: createEdgeTransport, check: validate }, options)
}

function createEdgeTransport(options: ResolvedGateOptions): SidecarTransport {
  const target = parseSidecarUrl(options.sidecarUrl)
  if (target.kind !== 'unix') return createFetchTransport(options.sidecarUrl, options)
  if (loadNet() === undefined) throw new InvalidConfigError('sidecarUrl', 'an http:// or https:// URL on this runtime (unix: needs Node sockets)', options.sidecarUrl)
  return createSocketTransport(target, options.sidecarUrl, options)
}
