// The edge core: `fetch` and the precompiled validators of @gate/schemas/standalone. Nothing in this
// module's import graph touches node: modules, undici or ajv (checked by edge-graph.test.ts).
import { validate } from '@gate/schemas/standalone'
import { createFetchTransport } from './fetch-transport.js'
import { createGateCoreOn } from './gate-core.js'
import type { GateCore } from './gate-types.js'
import type { GateMiddlewareOptions } from './options.js'

/** Creates the middleware core for the edge runtime (or any runtime with `fetch`). */
export function createEdgeGateCore(options?: GateMiddlewareOptions): GateCore {
  return createGateCoreOn({ createTransport: o => createFetchTransport(o.sidecarUrl, o), check: validate }, options)
}
