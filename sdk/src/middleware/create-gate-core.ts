// The Node core: undici transport and the ajv-compiled validators of @gate/schemas.
import { getValidator, validate } from '@gate/schemas'
import { createGateCoreOn } from './gate-core.js'
import type { GateCore } from './gate-types.js'
import type { GateMiddlewareOptions } from './options.js'
import { createUndiciTransport } from './undici-transport.js'

const EVALUATE_RESPONSE_SCHEMA = 'gate.http.evaluate_response.v1'

/** Creates the middleware core for Node; throws a GateError for a bad option. */
export function createGateCore(options?: GateMiddlewareOptions): GateCore {
  const core = createGateCoreOn({ createTransport: o => createUndiciTransport(o.sidecarUrl, o), check: validate }, options)
  // compiled now, with the app: on first use it put ~190 ms (ajv set-up included) into the first request
  getValidator(EVALUATE_RESPONSE_SCHEMA)
  return core
}
