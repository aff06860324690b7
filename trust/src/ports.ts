// What trust-control needs from its host (the sidecar or `gate trust serve`), declared here so this
// package never imports its caller: an authenticator, the authority that signs, and the stores.
import type { IncomingMessage } from 'node:http'
import type { CapabilityScope, CapabilityToken } from '@gate/sdk'

/** Who is calling: the admin service principal, or a tenant's read principal. */
export type Principal = { kind: 'admin' } | { kind: 'tenant'; tenant: string }

export type AuthResult = { ok: true; principal: Principal } | { ok: false; status: 401 | 403; message: string }

export interface TrustAuthenticator {
  authenticate(req: IncomingMessage): AuthResult
}

export interface CapabilityIssuerPort {
  /** Signs a new token for `subjectPublicKey` with the current authority key and remembers it. */
  issue(request: { subjectPublicKey: string; scope: CapabilityScope; ttlSeconds: number; runtimeAttestation?: unknown }): Promise<CapabilityToken>
}

export interface RevocationPort {
  /** Durably revokes; `newlyRevoked` is false when it was already revoked. */
  revoke(capabilityId: string): Promise<{ revoked: boolean; newlyRevoked: boolean }>
}
