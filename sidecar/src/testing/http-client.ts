// Minimal JSON-over-HTTP helpers for end-to-end tests (undici request; loopback only).
import { request } from 'undici'
import { validate } from '@gate/schemas'

export interface JsonResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: unknown
  text: string
}

export async function call(
  url: string,
  options: { method?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string | string[]> } = {},
): Promise<JsonResponse> {
  // an array value sends the header once per element (hostile-header tests)
  const headers: Record<string, string | string[]> = { ...options.headers }
  let body: string | Buffer | undefined = options.rawBody
  if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await request(url, { method: (options.method ?? (body === undefined ? 'GET' : 'POST')) as 'GET', headers, body })
  const text = await res.body.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text }
}

/** Asserts a value against a schema id and returns the error list (empty when valid). */
export function schemaErrors(id: string, value: unknown): string[] {
  const r = validate(id, value)
  return r.ok ? [] : r.errors
}
