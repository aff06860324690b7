// Times in messages people read: the wire carries Unix seconds, a reader wants a date.

/** `2026-11-26T10:00:00Z (1795687200)`: ISO 8601 in UTC beside the Unix seconds; the number alone when it is no date. */
export function describeUnixTime(seconds: number): string {
  const date = new Date(seconds * 1000)
  if (!Number.isFinite(seconds) || Number.isNaN(date.getTime())) return String(seconds)
  return `${date.toISOString().replace(/\.000Z$/, 'Z')} (${seconds})`
}
