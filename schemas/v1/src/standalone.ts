// Edge entry point (`@gate/schemas/standalone`): the same validate/assertValid/validators API as the
// main entry, backed by the precompiled validators in generated/standalone.ts. No node: imports, no
// ajv at run time and no `new Function`, so it runs in Next.js edge middleware.
import { UnknownSchemaError } from './errors.js'
import { validationApi } from './validation.js'
import * as generated from './generated/standalone.js'
import { isSchemaId, SCHEMA_IDS, VALIDATOR_NAMES, type ValidatorName } from './schema-ids.js'
import type { StandaloneValidateFunction } from './standalone-types.js'

export { HTTP_SCHEMA_IDS, SCHEMA_IDS, isSchemaId, type HttpSchemaId, type SchemaId, type ValidatorName } from './schema-ids.js'
export { SchemaError, SchemaValidationError, UnknownSchemaError } from './errors.js'
export type { ValidationResult } from './format-errors.js'
export type { StandaloneValidateFunction } from './standalone-types.js'

/** One precompiled validator per schema, by name (e.g. `validators.httpRequest`). */
export const validators: Readonly<Record<ValidatorName, StandaloneValidateFunction>> = Object.freeze(
  // biome-ignore lint/performance/noDynamicNamespaceImportAccess: every validator is exported, so every one is kept anyway
  Object.fromEntries(SCHEMA_IDS.map((id) => [VALIDATOR_NAMES[id], generated[VALIDATOR_NAMES[id]]])) as Record<
    ValidatorName,
    StandaloneValidateFunction
  >,
)

/** The precompiled validator for `id`; throws UnknownSchemaError for an id not shipped. */
export function getValidator(id: string): StandaloneValidateFunction {
  if (!isSchemaId(id)) throw new UnknownSchemaError(id)
  return validators[VALIDATOR_NAMES[id]]
}

/** `validate(id, value)` (never mutates it) and `assertValid(id, value)` (throws SchemaValidationError, 400 gate_bad_request). */
export const { validate, assertValid } = validationApi(getValidator)
