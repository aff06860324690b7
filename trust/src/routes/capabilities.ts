// POST /v1/capabilities/issue and POST /v1/revocations (spec 03, "Issuance and revocation shapes"),
// admin-only. Inputs are checked field by field with messages naming the field.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { CapabilityScope } from '@gate/sdk'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { TrustRequestError } from '../errors.js'
import { readQueryParameters } from '../query-params.js'
import type { CapabilityIssuerPort, RevocationPort, TrustAuthenticator } from '../ports.js'

import { readJsonObject } from './json-body.js'

export { TRUST_POST_BODY_LIMIT } from './json-body.js'
/** Longest capability lifetime issued: one year. */
export const MAX_TTL_SECONDS = 366 * 24 * 3600

const SUBJECT_KEY = /^(?:[0-9a-f]{64}|p256:04[0-9a-f]{128}|p384:04[0-9a-f]{192})$/

export function createIssueRoute(deps: { auth: TrustAuthenticator; issuer: CapabilityIssuerPort }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'capability issuance')
      // no parameters: one given is a mistake to point out, not to ignore
      readQueryParameters(url, [])
      const body = await readJsonObject(req)
      const subjectPublicKey = body.subjectPublicKey
      if (typeof subjectPublicKey !== 'string' || !SUBJECT_KEY.test(subjectPublicKey)) {
        throw new TrustRequestError('subjectPublicKey must be a hex Ed25519 public key (64 lowercase hex characters)')
      }
      const ttl = body.ttlSeconds
      if (!Number.isSafeInteger(ttl) || (ttl as number) < 1 || (ttl as number) > MAX_TTL_SECONDS) {
        throw new TrustRequestError(`ttlSeconds must be an integer from 1 to ${MAX_TTL_SECONDS}`)
      }
      const scope = checkScope(body.scope)
      const capability = await deps.issuer.issue({ subjectPublicKey, scope, ttlSeconds: ttl as number, runtimeAttestation: body.runtimeAttestation })
      // Gate's additive member: the token is issued either way, the caller is told what it will not cover
      const warnings = deps.issuer.scopeWarnings?.(scope) ?? []
      sendJson(res, 200, warnings.length === 0 ? { capability } : { capability, warnings })
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

export function createRevokeRoute(deps: { auth: TrustAuthenticator; revocations: RevocationPort }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'capability revocation')
      readQueryParameters(url, [])
      const body = await readJsonObject(req)
      const id = body.capabilityId
      if (typeof id !== 'string' || id === '' || id.length > 256) throw new TrustRequestError('capabilityId must be a non-empty string')
      const { revoked, newlyRevoked, issued } = await deps.revocations.revoke(id)
      // Gate's additive member: revoking an id this store never issued is most often a mistyped id
      const warnings = issued === false ? [neverIssuedWarning(id)] : []
      sendJson(res, 200, warnings.length === 0 ? { capabilityId: id, revoked, newlyRevoked } : { capabilityId: id, revoked, newlyRevoked, warnings })
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

/** The warning of a revocation of an id the store never issued. */
function neverIssuedWarning(capabilityId: string): string {
  return `no capability ${capabilityId} was issued here; it is recorded as revoked anyway (a token with this id from another issuer is refused too): check the id`
}

function checkScope(scope: unknown): CapabilityScope {
  if (typeof scope !== 'object' || scope === null || Array.isArray(scope)) throw new TrustRequestError('scope must be an object')
  const s = scope as Record<string, unknown>
  // spec 03: a scope may grant only resources or prompts, with no grants member
  for (const kind of ['grants', 'resource_grants', 'prompt_grants']) {
    if (s[kind] !== undefined && !Array.isArray(s[kind])) throw new TrustRequestError(`scope.${kind} must be an array`)
  }
  const grants = (s.grants ?? []) as unknown[]
  grants.forEach((g, i) => {
    if (typeof g !== 'object' || g === null) throw new TrustRequestError(`scope.grants[${i}] must be an object`)
    const grant = g as Record<string, unknown>
    if (typeof grant.server_id !== 'string' || grant.server_id === '') throw new TrustRequestError(`scope.grants[${i}].server_id must be a non-empty string`)
    if (typeof grant.tool_name !== 'string' || grant.tool_name === '') throw new TrustRequestError(`scope.grants[${i}].tool_name must be a non-empty string`)
    const max = grant.max_invocations
    if (max !== undefined && max !== null && (!Number.isSafeInteger(max) || (max as number) < 0)) {
      throw new TrustRequestError(`scope.grants[${i}].max_invocations must be a non-negative integer`)
    }
  })
  return scope as CapabilityScope
}
