// The Node core: undici transport and the ajv-compiled validators of @gate/schemas.
import { validate } from '@gate/schemas'
import { createGateCoreOn } from './gate-core.js'
import type { GateCore } from './gate-types.js'
import type { GateMiddlewareOptions } from './options.js'
import { createUndiciTransport } from './undici-transport.js'

/** Creates the middleware core for Node; throws a GateError for a bad option. */
export function createGateCore(options?: GateMiddlewareOptions): GateCore {
  return createGateCoreOn({ createTransport: o => createUndiciTransport(o.sidecarUrl, o), check: validate }, options)
}
