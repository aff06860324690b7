export { toolsFromSpec } from './tools-from-spec.js'
export { manifestFromSpec, buildManifest, MANIFEST_SCHEMA_ID, PROTOCOL_VERSION } from './manifest-from-spec.js'
export { routeTableFromSpec, buildRouteTable } from './route-table.js'
export { matchRoute, createRouteTable, RouteIndex, type RouteTable, type RouteTableOptions } from './match-route.js'
export { convertSpec, type ConvertedOperation, type SpecConversion } from './convert-spec.js'
export { GENERATOR_DEFAULTS, resolveGeneratorConfig, type GeneratorConfig, type ResolvedGeneratorConfig } from './generator-config.js'
export { parseDocument, DEFAULT_TITLE, DEFAULT_VERSION, type OpenApiDocument } from './parse-document.js'
export { parseJsonText, exactInteger } from './parse-json.js'
export { parseYamlText } from './parse-yaml.js'
export { RefResolver, isReference, escapeToken, pointerToLocation, type ResolvedRef } from './resolve-refs.js'
export { SchemaExpander, EXPANSION_LIMITS, type ExpansionLimits } from './expand-schema.js'
export {
  extractOperations,
  compareCodePoints,
  type ExtractedOperation,
  type ExtractedParameter,
  type ParameterLocation,
} from './extract-operations.js'
export {
  readExtensions,
  SENSITIVITY_KEY,
  SIDE_EFFECTS_KEY,
  APPROVAL_REQUIRED_KEY,
  BUDGET_LIMIT_KEY,
  PUBLISH_KEY,
  MAX_BUDGET_LIMIT,
} from './read-extensions.js'
export { classifyPolicy, classifyMethod, hasSideEffects } from './classify-policy.js'
export { buildInputSchema } from './build-input-schema.js'
export { buildOutputSchema } from './build-output-schema.js'
export { selectRequestBody, selectOutputSchema, type RequestBodySelection, type SchemaSource } from './select-schemas.js'
export { buildToolDefinition, toolNameOf } from './build-tool-definition.js'
export { OpenApiError, isOpenApiError, OPENAPI_ERROR_KINDS, type OpenApiErrorKind } from '../errors.js'
export type * from './types.js'
