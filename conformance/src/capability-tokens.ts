// Capability tokens for the checks: minted locally with a key the sidecar does not trust (an
// untrusted, expired, wrong-scope or tampered token must be denied), or issued by the sidecar itself
// through its control routes when a control token is given (docs/capabilities.md, spec 01).
import { createSigner, generateSecret, signCapability, uuidv7, type CapabilityToken, type Signer, type ToolGrant } from '@gate/sdk'
import type { HttpClient } from './http-client.js'
import type { PolicyRoute } from './policy.js'
import { fail } from './check-outcome.js'

/** The HTTP grant convention: `server_id` "http", `tool_name` "{METHOD} {pattern}". */
export function grantFor(route: Pick<PolicyRoute, 'method' | 'pattern'>): ToolGrant {
  return { server_id: 'http', tool_name: `${route.method} ${route.pattern}` }
}

/** A grant for a route no document has. */
export const WRONG_SCOPE_GRANT: ToolGrant = Object.freeze({ server_id: 'http', tool_name: 'POST /gate-conformance/wrong-scope' })

/** A fresh Ed25519 signer nobody trusts. */
export function createUntrustedSigner(): Signer {
  return createSigner({ secret: generateSecret() })
}

export interface MintOptions {
  grants: ToolGrant[]
  /** Unix seconds; default now. */
  issuedAt?: number
  /** Unix seconds; default issuedAt + 3600. */
  expiresAt?: number
}

/** Signs a gate.capability.v1 token with `signer` as issuer. */
export function mintToken(signer: Signer, options: MintOptions): CapabilityToken {
  const issuedAt = options.issuedAt ?? Math.floor(Date.now() / 1000)
  return signCapability(
    {
      schema: 'gate.capability.v1',
      id: `cap_conformance_${uuidv7()}`,
      subject: createUntrustedSigner().publicKey,
      scope: { grants: options.grants },
      issued_at: issuedAt,
      expires_at: options.expiresAt ?? issuedAt + 3600,
    },
    signer,
  )
}

/** The X-Gate-Capability header form: base64url of the token JSON. */
export function encodeToken(token: CapabilityToken): string {
  return Buffer.from(JSON.stringify(token), 'utf8').toString('base64url')
}

/** The sidecar's control routes (Authorization: Bearer <control token>). */
export class ControlClient {
  constructor(
    private readonly http: HttpClient,
    private readonly controlToken: string,
  ) {}

  /** POST /v1/capabilities/issue; fails the check unless it answers 200 with a capability. */
  async issue(grants: ToolGrant[], ttlSeconds: number): Promise<CapabilityToken> {
    const res = await this.http.send({
      method: 'POST',
      path: '/v1/capabilities/issue',
      headers: { authorization: `Bearer ${this.controlToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subjectPublicKey: createUntrustedSigner().publicKey, scope: { grants }, ttlSeconds }),
    })
    const capability = (res.json as { capability?: CapabilityToken } | undefined)?.capability
    if (res.status !== 200 || typeof capability !== 'object' || capability === null || typeof capability.id !== 'string') {
      fail(`POST /v1/capabilities/issue answered ${res.status} ${res.text.slice(0, 200)} (is the control token right?)`)
    }
    return capability
  }

  /** POST /approvals/{id}/respond (Gate's approvals, docs/approvals.md); fails the check unless it answers 200. */
  async respondToApproval(approvalId: string, decision: 'approve' | 'deny'): Promise<void> {
    const res = await this.http.send({
      method: 'POST',
      path: `/approvals/${encodeURIComponent(approvalId)}/respond`,
      headers: { authorization: `Bearer ${this.controlToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision, reason: 'gate-conformance' }),
    })
    if (res.status !== 200) fail(`POST /approvals/${approvalId}/respond answered ${res.status} ${res.text.slice(0, 200)}`)
  }

  /** POST /v1/revocations; fails the check unless it answers 200 with revoked: true. */
  async revoke(capabilityId: string): Promise<void> {
    const res = await this.http.send({
      method: 'POST',
      path: '/v1/revocations',
      headers: { authorization: `Bearer ${this.controlToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ capabilityId }),
    })
    if (res.status !== 200 || (res.json as { revoked?: unknown } | undefined)?.revoked !== true) {
      fail(`POST /v1/revocations answered ${res.status} ${res.text.slice(0, 200)}`)
    }
  }
}
