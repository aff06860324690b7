// validate/assertValid over any id → validator lookup: the main entry passes ajv's lazily compiled
// validators, the edge entry its precompiled ones, and both answer alike.
import { SchemaValidationError } from './errors.js'
import { formatErrors, type ValidationResult } from './format-errors.js'
import type { StandaloneValidateFunction } from './standalone-types.js'

export interface ValidationApi {
  /** Validates `value` against schema `id`; never mutates it. */
  validate(id: string, value: unknown): ValidationResult
  /** Throws SchemaValidationError (400 gate_bad_request) when `value` does not match schema `id`. */
  assertValid(id: string, value: unknown): void
}

/** Builds validate/assertValid on `getValidator`, which throws UnknownSchemaError for an id not shipped. */
export function validationApi(getValidator: (id: string) => StandaloneValidateFunction): ValidationApi {
  function validate(id: string, value: unknown): ValidationResult {
    const validator = getValidator(id)
    if (validator(value)) return { ok: true }
    return { ok: false, errors: formatErrors(validator.errors) }
  }
  function assertValid(id: string, value: unknown): void {
    const result = validate(id, value)
    if (!result.ok) throw new SchemaValidationError(id, result.errors)
  }
  return { validate, assertValid }
}
