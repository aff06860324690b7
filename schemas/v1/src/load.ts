// The loader: compiles each shipped schema once with ajv (draft 2020-12, strict) and hands out
// validators by id. Compilation is lazy per schema; compileAllSchemas() does it all up front.
import type { Ajv2020, SchemaObject, ValidateFunction } from 'ajv/dist/2020.js'
import { createAjv } from './create-ajv.js'
import { SchemaValidationError, UnknownSchemaError } from './errors.js'
import { formatErrors, type ValidationResult } from './format-errors.js'
import { readAllSchemaFiles } from './schema-files.js'
import { isSchemaId, SCHEMA_IDS, VALIDATOR_NAMES, type SchemaId, type ValidatorName } from './schema-ids.js'

let schemaFiles: ReadonlyMap<SchemaId, SchemaObject> | undefined
let ajvInstance: Ajv2020 | undefined

function getSchemaFiles(): ReadonlyMap<SchemaId, SchemaObject> {
  schemaFiles ??= readAllSchemaFiles()
  return schemaFiles
}

function getAjv(): Ajv2020 {
  ajvInstance ??= createAjv(getSchemaFiles().values())
  return ajvInstance
}

/** The parsed (frozen) JSON schema for `id`; throws UnknownSchemaError for an id not shipped. */
export function getSchema(id: string): SchemaObject {
  if (!isSchemaId(id)) throw new UnknownSchemaError(id)
  return getSchemaFiles().get(id) as SchemaObject
}

/** The compiled validator for `id` (compiled on first use); throws UnknownSchemaError for an id not shipped. */
export function getValidator(id: string): ValidateFunction {
  if (!isSchemaId(id)) throw new UnknownSchemaError(id)
  const validator = getAjv().getSchema(id)
  // Every shipped id was added to ajv, so a miss means a broken install: fail closed.
  if (!validator) throw new UnknownSchemaError(id)
  return validator
}

/** Compiles every schema now (for process start); returns the milliseconds it took. */
export function compileAllSchemas(): number {
  const started = performance.now()
  for (const id of SCHEMA_IDS) getValidator(id)
  return performance.now() - started
}

/** Validates `value` against schema `id`; never mutates it. */
export function validate(id: string, value: unknown): ValidationResult {
  const validator = getValidator(id)
  if (validator(value)) return { ok: true }
  return { ok: false, errors: formatErrors(validator.errors) }
}

/** Throws SchemaValidationError (400 gate_bad_request) when `value` does not match schema `id`. */
export function assertValid(id: string, value: unknown): void {
  const result = validate(id, value)
  if (!result.ok) throw new SchemaValidationError(id, result.errors)
}

/** One compiled validator per schema, by name (e.g. `validators.httpRequest`); each compiles on first access. */
export const validators: Readonly<Record<ValidatorName, ValidateFunction>> = Object.freeze(
  Object.defineProperties(
    {},
    Object.fromEntries(
      SCHEMA_IDS.map((id) => [
        VALIDATOR_NAMES[id],
        { enumerable: true, get: (): ValidateFunction => getValidator(id) },
      ]),
    ),
  ) as Record<ValidatorName, ValidateFunction>,
)
