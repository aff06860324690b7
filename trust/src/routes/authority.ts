// GET /v1/authority (status) and POST /v1/authority (rotation), service token only (spec 03), answered as
// gate.fleet.authority.v1 (sidecars of a fleet follow it). Rotation
// makes a new seed current at generation + 1 and keeps every earlier public key trusted, so receipts
// and tokens signed before it still verify.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { readBody, sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import type { AuthorityMessage } from '../fleet/fleet-messages.js'
import type { AuthorityPort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { TRUST_POST_BODY_LIMIT } from './json-body.js'
import { authorityBlock } from './health.js'

export function createAuthorityStatusRoute(deps: { auth: TrustAuthenticator; authority: AuthorityPort }) {
  return (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): void => {
    try {
      requireAdmin(deps.auth, req, 'authority status')
      readQueryParameters(url, [])
      sendJson(res, 200, authorityBlock(deps.authority))
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

export function createAuthorityRotateRoute(deps: { auth: TrustAuthenticator; authority: AuthorityPort; log: (line: string) => void }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'authority rotation')
      readQueryParameters(url, [])
      // The body carries nothing; read it (bounded) so the connection stays usable.
      await readBody(req, TRUST_POST_BODY_LIMIT)
      const previousPublicKey = deps.authority.status().publicKey
      await deps.authority.rotate()
      const block = authorityBlock(deps.authority)
      deps.log(`authority rotated to generation ${block.generation} (${block.publicKey})`)
      const answer: AuthorityMessage = { ...block, previousPublicKey }
      sendJson(res, 200, answer)
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}
