// The tool output schema: the selected 2xx response schema, expanded into a standalone root that
// carries its own `$defs` when it is recursive (spec 01, ToolDefinition `output_schema`).
import type { SchemaExpander } from './expand-schema.js'
import { isPlainObject } from './is-plain-object.js'
import type { JsonSchema } from './types.js'

/** Expands an output schema into a standalone root (its `$defs` attached); undefined if not an object. */
export function buildOutputSchema(schema: unknown, location: string, expander: SchemaExpander): JsonSchema | undefined {
  const defs = new Set<string>()
  const expanded = expander.expand(schema, location, defs)
  const definitions = expander.definitionsFor(defs)
  if (!isPlainObject(expanded)) return undefined
  if (definitions === undefined) return expanded
  const own = isPlainObject(expanded.$defs) ? expanded.$defs : {}
  return { ...expanded, $defs: { ...own, ...definitions } }
}
