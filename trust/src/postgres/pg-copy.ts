// COPY ... FROM STDIN in PostgreSQL's text format: the encoding of a row, and one COPY on a connection.
// Text format, not CSV or binary: its escapes are few and fixed (a backslash, a tab, a newline, a
// carriage return, and \N for null), and the server parses it faster than it parses array literals.
import { pipeline } from 'node:stream/promises'
import { Readable } from 'node:stream'
import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'

/** A COPY text-format field: null is `\N`, and the characters the format uses as delimiters are escaped. */
export function copyField(value: string | number | bigint | null | undefined): string {
  if (value === null || value === undefined) return '\\N'
  if (typeof value !== 'string') return String(value)
  // one pass: most fields (ids, names) hold none of these
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, c => ESCAPES[c]!) : value
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }

/** One COPY text-format line (tab-separated fields, newline-terminated). */
export function copyLine(values: readonly (string | number | bigint | null | undefined)[]): string {
  return `${values.map(copyField).join('\t')}\n`
}

/** Runs `sql` (a `COPY ... FROM STDIN`) on `client`, feeding it `text`; resolves with the rows copied. */
export async function copyInto(client: pg.PoolClient, sql: string, text: string): Promise<number> {
  const stream = client.query(copyFrom(sql))
  await pipeline(Readable.from([Buffer.from(text, 'utf8')]), stream)
  return stream.rowCount
}
