// @gate/trust's errors. Trust-control answers with spec 03 bodies (a single `error` string); codes
// still come from @gate/sdk's table.
import { GateError } from '@gate/sdk'

/** A request to a /v1 route that is malformed: bad JSON, wrong types, invalid filters. */
export class TrustRequestError extends GateError {
  constructor(message: string) {
    super('gate_bad_request', message)
    this.name = 'TrustRequestError'
  }
}
