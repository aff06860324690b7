// How a tool call of an OpenAPI operation becomes its HTTP request (spec 01 ToolDefinition): path
// parameters fill the path template (percent-encoded, so an argument can never add a path segment or
// leave the upstream's base path), query parameters become the query string (an array repeats the
// key), and `body` becomes the request body in the operation's media type (docs/mcp.md, "Request
// bodies").
import type { OperationCall } from '@gate/openapi'
import { ToolServerError } from './errors.js'

export interface OperationRequest {
  method: string
  /** The upstream base URL's path prefix plus the filled path and the query string. */
  path: string
  headers: Record<string, string>
  body: string | undefined
}

/** Builds the request; `base` is the upstream URL, whose path is kept as a prefix. */
export function buildOperationRequest(call: OperationCall, args: Record<string, unknown>, base: URL): OperationRequest {
  let path = call.path
  const query = new URLSearchParams()
  for (const p of call.parameters) {
    const value = args[p.name]
    if (value === undefined || value === null) continue
    if (p.in === 'path') path = path.split(`{${p.name}}`).join(encodeURIComponent(scalarText(value)))
    else for (const item of Array.isArray(value) ? value : [value]) query.append(p.name, scalarText(item))
  }
  // a template variable the document never declared as a parameter cannot be filled: sending the
  // literal `{name}` would call some other resource
  const unfilled = /\{[^}]*\}/.exec(path)
  if (unfilled !== null) throw new ToolServerError('protocol', `${call.method} ${call.path}: the path variable ${unfilled[0]} is not a declared path parameter`)
  const prefix = base.pathname.replace(/\/+$/, '')
  const search = query.toString()
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.5' }
  let body: string | undefined
  if (call.body !== undefined && args.body !== undefined) {
    const encoded = encodeBody(args.body, call.body.mediaType)
    body = encoded.text
    headers['content-type'] = encoded.contentType
  }
  return { method: call.method, path: `${prefix}${path}${search === '' ? '' : `?${search}`}`, headers, body }
}

function scalarText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function isJsonMediaType(mediaType: string | undefined): boolean {
  if (mediaType === undefined) return true
  const type = mediaType.split(';')[0]!.trim().toLowerCase()
  return type === 'application/json' || type.endsWith('+json')
}

// JSON media types (and an operation whose body has no media type) get the JSON text of `body`; a
// form body an object's entries; any other type the string itself (text, XML, CSV: what the
// operation takes, as text), or the JSON text of a non-string value.
function encodeBody(body: unknown, mediaType: string | undefined): { text: string; contentType: string } {
  if (isJsonMediaType(mediaType)) return { text: JSON.stringify(body), contentType: mediaType ?? 'application/json' }
  const type = mediaType as string
  if (type.toLowerCase().startsWith('application/x-www-form-urlencoded') && typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const form = new URLSearchParams()
    for (const [k, v] of Object.entries(body)) if (v !== undefined && v !== null) form.append(k, scalarText(v))
    return { text: form.toString(), contentType: type }
  }
  return { text: typeof body === 'string' ? body : JSON.stringify(body), contentType: type }
}
