// The only place @gate/conformance's error codes appear (STYLE, Errors). The suite itself raises one
// kind of error: a bad invocation (flags, an unreadable --spec document), which the CLI turns into
// exit code 2. Everything a sidecar does wrong is a check result, never an exception.
import { GateError } from '@gate/sdk'

/** A bad flag, option or document given to the suite. */
export class UsageError extends GateError {
  constructor(detail: string, cause?: unknown) {
    super('gate_invalid_config', detail, { cause })
    this.name = 'UsageError'
  }
}
