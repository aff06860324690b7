// The tool input schema (spec 01, "Input schema normalization"): one `type: object` schema whose
// properties are the path and query parameters (header and cookie parameters never appear) plus
// `body` for the request body. A later property of the same name replaces an earlier one; the body
// comes last, so it replaces a parameter called `body`. Every operation that takes a request body gets
// the property, `{}` (any value) when the document gives no usable schema (a body of, say,
// `application/octet-stream` with no schema): without it the tool could never send one.
import { setOwn, type SchemaExpander } from './expand-schema.js'
import type { ExtractedParameter } from './extract-operations.js'
import { isPlainObject } from './is-plain-object.js'
import type { RequestBodySelection } from './select-schemas.js'
import type { JsonSchema } from './types.js'

/** Builds `input_schema` from merged parameters and the selected request body. */
export function buildInputSchema(
  parameters: readonly ExtractedParameter[],
  body: RequestBodySelection | undefined,
  expander: SchemaExpander,
): JsonSchema {
  const properties: Record<string, unknown> = {}
  const required = new Set<string>()
  const defs = new Set<string>()
  for (const parameter of parameters) {
    if (parameter.in !== 'path' && parameter.in !== 'query') continue
    const expanded = parameter.schema === undefined ? undefined : expander.expand(parameter.schema, `${parameter.location}.schema`, defs)
    // spec 01: no schema, or a schema that is not an object, becomes {type: string}.
    let property: Record<string, unknown> = isPlainObject(expanded) ? expanded : { type: 'string' }
    if (parameter.description !== undefined) property = { ...property, description: parameter.description }
    setOwn(properties, parameter.name, property)
    if (parameter.required) required.add(parameter.name)
    else required.delete(parameter.name)
  }
  if (body !== undefined) {
    const expanded = body.source === undefined ? undefined : expander.expand(body.source.schema, body.source.location, defs)
    properties.body = isPlainObject(expanded) || typeof expanded === 'boolean' ? expanded : {}
    if (body.required) required.add('body')
    else required.delete('body')
  }
  const schema: JsonSchema = { type: 'object', properties }
  if (required.size > 0) schema.required = [...required]
  const definitions = expander.definitionsFor(defs)
  if (definitions !== undefined) schema.$defs = definitions
  return schema
}
