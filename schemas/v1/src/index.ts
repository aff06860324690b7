export {
  HTTP_SCHEMA_IDS,
  EXTRA_SCHEMA_IDS,
  FLEET_SCHEMA_IDS,
  SCHEMA_IDS,
  VALIDATOR_NAMES,
  isSchemaId,
  type HttpSchemaId,
  type FleetSchemaId,
  type SchemaId,
  type ValidatorName,
} from './schema-ids.js'
export { getSchema, getValidator, compileAllSchemas, validate, assertValid, validators } from './load.js'
export { SchemaError, SchemaValidationError, UnknownSchemaError } from './errors.js'
export { formatErrors, type ValidationResult } from './format-errors.js'
