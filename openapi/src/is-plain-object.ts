// The one structural test every stage needs: a JSON object (not null, not an array).

/** True for a JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
