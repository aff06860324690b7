// The only place @gate/openapi's own error class lives. Wire codes come from @gate/sdk's errors.ts.
import { GateError } from '@gate/sdk'

// spec 01, Errors: OpenApiError. `kind` is the discriminator; the code is gate_bad_request because the
// failure is always in the document a caller handed in (a proxy that cannot load its spec wraps it).

/** The six ways an OpenAPI document can fail conversion (spec 01, Errors, OpenApiError table). */
export type OpenApiErrorKind =
  | 'InvalidJson'
  | 'InvalidYaml'
  | 'MissingField'
  | 'UnsupportedVersion'
  | 'UnresolvedRef'
  | 'InvalidSpec'

/** Every OpenApiError kind, in the spec's table order. */
export const OPENAPI_ERROR_KINDS: readonly OpenApiErrorKind[] = Object.freeze([
  'InvalidJson',
  'InvalidYaml',
  'MissingField',
  'UnsupportedVersion',
  'UnresolvedRef',
  'InvalidSpec',
])

/** An OpenAPI document Gate cannot convert; `location` names the field or pointer at fault. */
export class OpenApiError extends GateError {
  readonly kind: OpenApiErrorKind
  readonly location: string
  readonly detail: string | undefined

  constructor(kind: OpenApiErrorKind, location: string, detail?: string, cause?: unknown) {
    super('gate_bad_request', `${kind}: ${location}${detail === undefined ? '' : ` (${detail})`}`, { cause })
    this.name = 'OpenApiError'
    this.kind = kind
    this.location = location
    this.detail = detail
  }
}

/** True for an OpenApiError, even one thrown by another installed copy of this package. */
export function isOpenApiError(value: unknown): value is OpenApiError {
  if (!(value instanceof Error)) return false
  const candidate = value as Partial<OpenApiError>
  return (
    candidate.code === 'gate_bad_request' &&
    candidate.name === 'OpenApiError' &&
    (OPENAPI_ERROR_KINDS as readonly unknown[]).includes(candidate.kind)
  )
}
