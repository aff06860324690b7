// Turns ajv error objects into one readable line each, led by the JSON pointer of the failing value.
// Type-only ajv import: the edge entry point uses this without loading ajv.
import type { ErrorObject } from 'ajv'

/** The outcome of validating one value. */
export type ValidationResult = { ok: true } | { ok: false; errors: string[] }

/** One line per error: `<JSON pointer or (root)>: <message>`, with the offending name or allowed values. */
export function formatErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  // A failing propertyNames reports the inner failure (naming the key) and then its own error;
  // the second says it better, so the inner ones are dropped.
  const relevant = (errors ?? []).filter((error) => error.propertyName === undefined || error.keyword === 'propertyNames')
  if (relevant.length === 0) return ['(root): value is invalid']
  return relevant.map(formatError)
}

function formatError(error: ErrorObject): string {
  const pointer = error.instancePath === '' ? '(root)' : error.instancePath
  return `${pointer}: ${describe(error)}`
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'additionalProperties':
      return `must not have member ${quote(params.additionalProperty)}`
    case 'propertyNames':
      return `must not have member ${quote(params.propertyName)}`
    case 'not':
      return 'is not allowed here'
    case 'false schema':
      // A `false` property schema: the member is forbidden (e.g. observation_outcome on an HttpReceipt).
      return 'must not be present'
    case 'enum':
      return `must be one of ${JSON.stringify(params.allowedValues)}`
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`
    case 'discriminator':
      // A tagged union whose tag is missing, not a string, or not one of the variants.
      return params.error === 'mapping'
        ? `unknown ${String(params.tag)} ${quote(params.tagValue)}`
        : `must have a string member ${JSON.stringify(params.tag)}`
    case 'pattern':
      return `must match pattern ${String(params.pattern)}`
    default:
      return error.message ?? `fails ${error.keyword}`
  }
}

// Member names and tag values come from the input: quote them, and cut long ones so a hostile
// 10 MiB key is not echoed back in an error body.
function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length <= 80 ? text : `${text.slice(0, 77)}...`
}
