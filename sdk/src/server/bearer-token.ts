// The bearer token of a request to one of Gate's own services. Exactly one Authorization header with
// the Bearer scheme (case-insensitive) and one token; anything else yields no token. A repeated header
// counts as none: Node keeps only the first of several, and a proxy in front may have used another, so
// an ambiguous credential is refused rather than guessed at.
import type { IncomingMessage } from 'node:http'

const BEARER = /^Bearer +([^\s]+) *$/i

/** The token of the request's one `Authorization: Bearer <token>` header, else undefined. */
export function bearerToken(req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string | undefined {
  const header = req.headers.authorization
  if (typeof header !== 'string' || authorizationCount(req.rawHeaders) !== 1) return undefined
  const match = BEARER.exec(header)
  return match === null ? undefined : match[1]
}

function authorizationCount(rawHeaders: readonly string[] | undefined): number {
  // rawHeaders alternates names and values, names as sent
  if (rawHeaders === undefined) return 1
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.length === 13 && rawHeaders[i]!.toLowerCase() === 'authorization') count++
  return count
}
