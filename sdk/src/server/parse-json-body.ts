// Decodes a request body as JSON the way every Gate route needs it: UTF-8, JSON.parse, and I-JSON
// (RFC 7493), which RFC 8785 requires of anything Gate canonicalizes. JSON.parse accepts a `\ud800`
// escape and yields a lone surrogate, which no receipt or token can then be signed over: caught here,
// such a body is the client's 400 instead of an evaluation failure (500) further in.

/** The decoded value, or why the body is not acceptable JSON (a sentence for the error message). */
export type JsonBodyResult = { ok: true; value: unknown } | { ok: false; problem: string }

// Lone surrogates can only come from `\uD800`-`\uDFFF` escapes: the UTF-8 decoder turns invalid bytes
// into U+FFFD, never into a surrogate. Bodies without such an escape skip the walk.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/

export function parseJsonBody(body: Buffer | string): JsonBodyResult {
  const text = typeof body === 'string' ? body : body.toString('utf8')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    return { ok: false, problem: `body is not valid JSON: ${(err as Error).message}` }
  }
  if (SURROGATE_ESCAPE.test(text)) {
    const at = loneSurrogateAt(value)
    if (at !== undefined) return { ok: false, problem: `body is not I-JSON (RFC 7493): the ${at} holds a lone surrogate` }
  }
  return { ok: true, value }
}

// Where the first string (or member name) with a lone surrogate is, as a JSON Pointer phrase. A walk
// with its own stack: the body may nest deeper than the call stack would allow.
function loneSurrogateAt(root: unknown): string | undefined {
  const stack: [unknown, string][] = [[root, '']]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, pointer] = next
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return `string at ${shown(pointer)}`
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${pointer}/${i}`])
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value)
      for (const [key] of entries) if (!key.isWellFormed()) return `member name in the object at ${shown(pointer)}`
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!
        stack.push([member, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`])
      }
    }
  }
  return undefined
}

// A pointer for a message: the root as "/", and never more than 200 characters of hostile member names.
function shown(pointer: string): string {
  if (pointer === '') return '/'
  return pointer.length > 200 ? `${pointer.slice(0, 200)}…` : pointer
}
