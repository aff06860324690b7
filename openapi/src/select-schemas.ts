// Request body and output schema selection (spec 01, "Request body and response schema selection"):
// `content["application/json"].schema` first, otherwise the first content type that has a schema;
// output from the 200 response, then 201, then any other 2xx (ascending, `2XX` last) with a schema.
import { OpenApiError } from './errors.js'
import { isPlainObject } from './is-plain-object.js'
import type { RefResolver } from './resolve-refs.js'

/** A schema value still to be expanded, with its location for errors. */
export interface SchemaSource {
  schema: unknown
  location: string
}

/** The request body of one operation. */
export interface RequestBodySelection {
  /** Undefined when no media type carries a schema. */
  source: SchemaSource | undefined
  /**
   * The media type a caller sends the body as: the one whose schema was selected; without any schema,
   * `application/json` when listed, else the first listed; undefined when `content` lists none.
   */
  mediaType: string | undefined
  /** `requestBody.required`, default false. */
  required: boolean
}

/** Reads `requestBody` (resolving a `$ref`); undefined when the operation has none. */
export function selectRequestBody(
  operation: Record<string, unknown>,
  resolver: RefResolver,
  location: string,
): RequestBodySelection | undefined {
  const raw = operation.requestBody
  if (raw === undefined) return undefined
  const { value: body, location: where } = resolver.resolveChain(raw, `${location}.requestBody`)
  if (!isPlainObject(body)) return undefined
  const required = body.required ?? false
  if (typeof required !== 'boolean') throw new OpenApiError('InvalidSpec', `${where}.required`, 'must be a boolean')
  const source = selectMediaSchema(body.content, `${where}.content`)
  return { source: source?.schemaSource, mediaType: source?.mediaType ?? firstMediaType(body.content), required }
}

function firstMediaType(content: unknown): string | undefined {
  if (!isPlainObject(content)) return undefined
  if (Object.hasOwn(content, 'application/json')) return 'application/json'
  return Object.keys(content)[0]
}

const OTHER_2XX = /^2\d\d$/
const RANGE_2XX = /^2XX$/i

/** The schema of the preferred 2xx response, or undefined when none has one. */
export function selectOutputSchema(
  operation: Record<string, unknown>,
  resolver: RefResolver,
  location: string,
): SchemaSource | undefined {
  const responses = operation.responses
  if (!isPlainObject(responses)) return undefined
  const codes = Object.keys(responses)
  const order = [
    ...['200', '201'].filter(code => Object.hasOwn(responses, code)),
    ...codes.filter(code => OTHER_2XX.test(code) && code !== '200' && code !== '201').sort(),
    ...codes.filter(code => RANGE_2XX.test(code)).sort(),
  ]
  for (const code of order) {
    const { value: response, location: where } = resolver.resolveChain(responses[code], `${location}.responses.${code}`)
    if (!isPlainObject(response)) continue
    const source = selectMediaSchema(response.content, `${where}.content`)
    if (source !== undefined) return source.schemaSource
  }
  return undefined
}

function selectMediaSchema(content: unknown, location: string): { schemaSource: SchemaSource; mediaType: string } | undefined {
  if (!isPlainObject(content)) return undefined
  const json = content['application/json']
  if (isPlainObject(json) && json.schema !== undefined) {
    return { schemaSource: { schema: json.schema, location: `${location}.application/json.schema` }, mediaType: 'application/json' }
  }
  for (const type of Object.keys(content)) {
    const media = content[type]
    if (isPlainObject(media) && media.schema !== undefined) return { schemaSource: { schema: media.schema, location: `${location}.${type}.schema` }, mediaType: type }
  }
  return undefined
}
