// The Node core: the socket transport (undici for https), the ajv-compiled validators of
// @gate/schemas, and receipt signatures verified on the libuv pool while the app's event loop is busy.
import { getValidator, validate } from '@gate/schemas'
import { checkHttpReceipt, checkHttpReceiptOffThread } from '../protocol/http-receipt.js'
import { createLoopPressure } from '../server/loop-pressure.js'
import { createGateCoreOn } from './gate-core.js'
import type { GateCore } from './gate-types.js'
import type { GateMiddlewareOptions, ResolvedGateOptions } from './options.js'
import type { SidecarTransport } from './sidecar-client.js'
import { parseSidecarUrl } from './sidecar-url.js'
import { createSocketTransport } from './socket-transport.js'
import { createUndiciTransport } from './undici-transport.js'

const EVALUATE_RESPONSE_SCHEMA = 'gate.http.evaluate_response.v1'

/**
 * Event-loop utilization from which receipt signatures are verified on the libuv pool. Verifying an
 * Ed25519 signature takes ~190 µs of the app's thread here; on the pool it takes ~340 µs of wall time
 * but frees the thread, which pays only once requests start waiting for it.
 */
export const OFF_THREAD_VERIFY_UTILIZATION = 0.5

/** Creates the middleware core for Node; throws a GateError for a bad option. */
export function createGateCore(options?: GateMiddlewareOptions): GateCore {
  const busy = createLoopPressure({ threshold: OFF_THREAD_VERIFY_UTILIZATION })
  const core = createGateCoreOn(
    {
      createTransport: createNodeTransport,
      check: validate,
      checkReceipt: (receipt, trustedKeys, receiptText) =>
        busy() ? checkHttpReceiptOffThread(receipt, { trustedKeys, receiptText }) : checkHttpReceipt(receipt, { trustedKeys, receiptText }),
    },
    options,
  )
  // compiled now, with the app: on first use it put ~190 ms (ajv set-up included) into the first request
  getValidator(EVALUATE_RESPONSE_SCHEMA)
  return core
}

/** http and unix: the socket transport; https: an undici Pool (TLS is undici's to do). */
export function createNodeTransport(options: ResolvedGateOptions): SidecarTransport {
  const target = parseSidecarUrl(options.sidecarUrl)
  if (target.kind === 'https') return createUndiciTransport(options.sidecarUrl, options)
  return createSocketTransport(target, options.sidecarUrl, options)
}
