// GET /v1/authority (status) and POST /v1/authority (rotation), service token only (spec 03), answered as
// gate.fleet.authority.v1 (sidecars of a fleet follow it). Rotation
// makes a new key current at generation + 1 and keeps every earlier public key trusted, so receipts
// and tokens signed before it still verify. The new key has the current key's algorithm; a body
// `{"algorithm": NAME}` (a `gate keygen --algorithm` name) rotates to another, earlier keys of every
// algorithm staying trusted.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { KEY_ALGORITHM_NAMES, type KeyAlgorithmName } from '@gate/sdk'
import { readBody, sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import type { AuthorityMessage } from '../fleet/fleet-messages.js'
import type { AuthorityPort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { TrustRequestError } from '../errors.js'
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
      const algorithm = readRotationBody((await readBody(req, TRUST_POST_BODY_LIMIT)).toString('utf8'))
      const previousPublicKey = deps.authority.status().publicKey
      await deps.authority.rotate({ algorithm })
      const block = authorityBlock(deps.authority)
      deps.log(`authority rotated to generation ${block.generation} (${block.publicKey})`)
      const answer: AuthorityMessage = { ...block, previousPublicKey }
      sendJson(res, 200, answer)
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

// An empty body keeps the algorithm; otherwise exactly {"algorithm": NAME}, anything else refused.
function readRotationBody(text: string): KeyAlgorithmName | undefined {
  if (text.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new TrustRequestError('the rotation body must be empty or a JSON object {"algorithm": NAME}')
  }
  const body = value as Record<string, unknown>
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(body).some(k => k !== 'algorithm')) {
    throw new TrustRequestError('the rotation body must be empty or a JSON object {"algorithm": NAME}')
  }
  if (body.algorithm === undefined) return undefined
  if (!(KEY_ALGORITHM_NAMES as readonly unknown[]).includes(body.algorithm)) {
    throw new TrustRequestError(`algorithm must be one of ${KEY_ALGORITHM_NAMES.join(', ')}, got ${JSON.stringify(body.algorithm)}`)
  }
  return body.algorithm as KeyAlgorithmName
}
