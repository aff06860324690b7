// One ToolDefinition per operation (spec 01, "ToolDefinition (derived)"): name, description
// fallbacks, input and output schemas, annotations. Pricing and estimated duration are absent.
import { buildInputSchema } from './build-input-schema.js'
import { buildOutputSchema } from './build-output-schema.js'
import { hasSideEffects } from './classify-policy.js'
import type { SchemaExpander } from './expand-schema.js'
import type { ExtractedOperation } from './extract-operations.js'
import type { ResolvedGeneratorConfig } from './generator-config.js'
import type { RefResolver } from './resolve-refs.js'
import { selectOutputSchema, type RequestBodySelection } from './select-schemas.js'
import type { GateExtensions, ToolDefinition } from './types.js'

const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'PUT', 'DELETE'])

/**
 * Builds the tool for one operation. Output schemas are expanded even when the config leaves them
 * out, so whether a document converts never depends on the configuration.
 */
export function buildToolDefinition(
  op: ExtractedOperation,
  body: RequestBodySelection | undefined,
  extensions: GateExtensions,
  expander: SchemaExpander,
  resolver: RefResolver,
  config: ResolvedGeneratorConfig,
): ToolDefinition {
  const input = buildInputSchema(op.parameters, body, expander)
  const selected = selectOutputSchema(op.operation, resolver, op.location)
  const output = selected === undefined ? undefined : buildOutputSchema(selected.schema, selected.location, expander)
  return {
    name: toolNameOf(op),
    description: text(op.operation.summary) ?? text(op.operation.description) ?? `${op.method} ${op.path}`,
    input_schema: input,
    ...(output !== undefined && config.includeOutputSchemas ? { output_schema: output } : {}),
    annotations: {
      read_only: !hasSideEffects(op.method, extensions),
      destructive: op.method === 'DELETE',
      idempotent: IDEMPOTENT.has(op.method),
      requires_approval: extensions.approvalRequired,
    },
  }
}

/** `operationId` when it is a non-empty string, else `{METHOD} {path}`. */
export function toolNameOf(op: ExtractedOperation): string {
  const id = op.operation.operationId
  return typeof id === 'string' && id !== '' ? id : `${op.method} ${op.path}`
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}
