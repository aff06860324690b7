// Method overriding (X-HTTP-Method-Override and its kin, a `_method` query or form parameter) lets a
// client send POST while a framework's middleware (Express's method-override, Rails, Laravel) routes
// it as DELETE. Gate decides on the method it sees, so such a request could be allowed as one method
// and executed as another. It is refused (400 gate_bad_request) by the SDK and by `gate api protect`
// alike, before the sidecar is asked; docs/security.md.
import { MethodOverrideError } from '../errors.js'

/** Headers frameworks read a method override from (lower-case). */
export const METHOD_OVERRIDE_HEADERS: readonly string[] = Object.freeze(['x-http-method-override', 'x-http-method', 'x-method-override'])

/** The query and form parameter frameworks read a method override from. */
export const METHOD_OVERRIDE_PARAMETER = '_method'

const FORM = /^application\/x-www-form-urlencoded\b/i

/**
 * Throws MethodOverrideError when the request carries a method override: one of the headers, a
 * `_method` query parameter, or a `_method` field of an urlencoded form body. `headers` have lower-case
 * names; `query` is the decoded query map.
 */
export function refuseMethodOverride(
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
  query: Readonly<Record<string, string>> | undefined,
  body: Uint8Array | null,
): void {
  for (const name of METHOD_OVERRIDE_HEADERS) if (headers[name] !== undefined) throw new MethodOverrideError(`${name} header`)
  if (query !== undefined && Object.hasOwn(query, METHOD_OVERRIDE_PARAMETER)) throw new MethodOverrideError(`${METHOD_OVERRIDE_PARAMETER} query parameter`)
  const type = headers['content-type']
  if (body !== null && body.length > 0 && typeof type === 'string' && FORM.test(type) && hasFormField(body, METHOD_OVERRIDE_PARAMETER)) {
    throw new MethodOverrideError(`${METHOD_OVERRIDE_PARAMETER} form field`)
  }
}

function hasFormField(body: Uint8Array, name: string): boolean {
  // cheap test first: the field's name (or an escape of it) must appear at all
  const text = new TextDecoder().decode(body)
  if (!text.includes(name) && !text.includes('%')) return false
  return new URLSearchParams(text).has(name)
}
