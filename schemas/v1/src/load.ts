// The loader: compiles each shipped schema once with ajv (draft 2020-12, strict) and hands out
// validators by id. Compilation is lazy per schema; compileAllSchemas() does it all up front.
import type { Ajv2020, SchemaObject, ValidateFunction } from 'ajv/dist/2020.js'
import { createAjv } from './create-ajv.js'
import { UnknownSchemaError } from './errors.js'
import { validationApi } from './validation.js'
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

/** `validate(id, value)` (never mutates it) and `assertValid(id, value)` (throws SchemaValidationError, 400 gate_bad_request). */
export const { validate, assertValid } = validationApi(getValidator)

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
