// Route-level authorization on top of the authenticator: any principal (the receipt read routes) or the
// admin service principal only (spec 03: analytics, operator report, authority, child listing, writes).
// A tenant token on an admin surface gets 403 with the spec's wording.
import type { IncomingMessage } from 'node:http'
import { ControlAuthError } from '@gate/sdk'
import type { Principal, TrustAuthenticator } from './ports.js'

/** The caller's principal; throws 401 for an absent or unknown token. */
export function requirePrincipal(auth: TrustAuthenticator, req: IncomingMessage): Principal {
  const result = auth.authenticate(req)
  if (!result.ok) throw new ControlAuthError(result.status, result.message)
  return result.principal
}

/** Throws 401/403 unless the caller is the admin service principal. */
export function requireAdmin(auth: TrustAuthenticator, req: IncomingMessage, surface: string): void {
  const principal = requirePrincipal(auth, req)
  if (principal.kind !== 'admin') throw forbidden(surface)
}

/** spec 03, Errors 403: `<surface> requires admin receipt read authority`. */
export function forbidden(surface: string): ControlAuthError {
  return new ControlAuthError(403, `${surface} requires admin receipt read authority`)
}
