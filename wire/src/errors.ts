// The only place @gate/wire's error classes live. The wire's own protocol failures are the SDK's
// WireProtocolError (@gate/sdk/wire); this package adds configuration errors only.
import { GateError } from '@gate/sdk'

/** Bad configuration of the wire endpoint or `gate run` (a tool server command, a server id). */
export class WireConfigError extends GateError {
  constructor(message: string, cause?: unknown) {
    super('gate_invalid_config', message, { cause })
    this.name = 'WireConfigError'
  }
}
