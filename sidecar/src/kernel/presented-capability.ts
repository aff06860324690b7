// The capability a request presents, and what its receipt may say about it (docs/security.md).
//
// Presentation: the X-Gate-Capability header, else the gate_capability query parameter, else the
// request's `capability_id` naming a token this sidecar issued. A `capability_id` is a lookup, not a
// credential: ids are printed in 403 bodies and receipts, so it is honoured only for a caller that
// presented the control token (the SDK with `sidecarToken`); from anyone else it counts as no token.
//
// Recording: a receipt files a decision under a capability id (and its agent subject) only when the
// token is authentic, i.e. signed by a trusted issuer: the capability guard verified it, or its
// signature and delegation chain verify, whatever its time window, scope or revocation. Anything else
// a request claimed (a token with a bad signature naming a victim's id, an unauthenticated
// `capability_id`) is kept as `metadata.gate_presented_capability` with `verified: false`, so
// `?capabilityId=` and agent queries never return it under someone else's id.
import { VerifiedSignatureCache, verifyCapability, type CapabilityToken, type GateHttpRequest } from '@gate/sdk'
import { parseCapabilityToken } from './capability-token.js'
import type { IssuedCapabilityPort } from './ports.js'

/** What a request presented, unverified. */
export interface PresentedCapability {
  token: CapabilityToken | undefined
  /** Why the presented text could not be read, or the id is unknown. */
  problem: string | undefined
  /** The presented id the revocation check looks at: the token's, or an honoured `capability_id`. */
  capabilityId: string | null
  /** A `capability_id` named by a caller without the control token (recorded, never looked up). */
  ignoredCapabilityId: string | undefined
}

/** Reads the presented capability of one request. */
export async function readPresentedCapability(
  request: GateHttpRequest,
  tokenText: string | undefined,
  authenticated: boolean,
  issued: IssuedCapabilityPort,
): Promise<PresentedCapability> {
  const named = typeof request.capability_id === 'string' && request.capability_id !== '' ? request.capability_id : undefined
  if (tokenText !== undefined) {
    const parsed = parseCapabilityToken(tokenText)
    const token = 'token' in parsed ? parsed.token : undefined
    const tokenId = typeof token?.id === 'string' ? token.id : undefined
    // with a token presented, `capability_id` only has to agree with it (the capability guard checks)
    return { token, problem: 'problem' in parsed ? parsed.problem : undefined, capabilityId: tokenId ?? named ?? null, ignoredCapabilityId: undefined }
  }
  if (named === undefined) return { token: undefined, problem: undefined, capabilityId: null, ignoredCapabilityId: undefined }
  if (!authenticated) return { token: undefined, problem: undefined, capabilityId: null, ignoredCapabilityId: named }
  const token = await issued.get(named)
  return { token, problem: token === undefined ? `capability ${named} was not issued by this sidecar` : undefined, capabilityId: named, ignoredCapabilityId: undefined }
}

/** What the receipt records about the capability. */
export interface RecordedCapability {
  capabilityId: string | null
  subjectKey: string | null
  /** For `metadata.gate_presented_capability`, when something unverified was presented. */
  presented: { capability_id: string | null; subject: string | null; verified: false } | undefined
}

/** Longest presented id or subject copied into a receipt. */
const MAX_RECORDED_CHARS = 256

/** Decides what a receipt may say; `verified` is the token the capability guard verified, if any. */
export class CapabilityRecorder {
  // separate from the capability guard's cache: this one is only ever asked about authenticity
  readonly #cache = new VerifiedSignatureCache()
  constructor(private readonly trustedIssuers: () => Iterable<string>) {}

  record(presented: PresentedCapability, verified: CapabilityToken | undefined, ids: { requestCapabilityId: string | null | undefined }): RecordedCapability {
    const authentic = verified ?? (presented.token !== undefined && this.#isAuthentic(presented.token) ? presented.token : undefined)
    if (authentic !== undefined) return { capabilityId: authentic.id, subjectKey: authentic.subject, presented: undefined }
    const claimedId = typeof presented.token?.id === 'string' ? presented.token.id : (presented.ignoredCapabilityId ?? ids.requestCapabilityId ?? null)
    const claimedSubject = typeof presented.token?.subject === 'string' ? presented.token.subject : null
    if (claimedId === null && claimedSubject === null) return { capabilityId: null, subjectKey: null, presented: undefined }
    return { capabilityId: null, subjectKey: null, presented: { capability_id: clip(claimedId), subject: clip(claimedSubject), verified: false } }
  }

  // Signed by a trusted issuer with a valid chain. The time window is not what makes it authentic:
  // it is checked at the token's own issue time, so an expired genuine token is still filed under its id.
  #isAuthentic(token: CapabilityToken): boolean {
    const at = Number.isSafeInteger(token.issued_at) ? token.issued_at : 0
    return verifyCapability(token, { trustedIssuers: this.trustedIssuers(), now: at, cache: this.#cache }).ok
  }
}

function clip(value: string | null): string | null {
  return value === null || value.length <= MAX_RECORDED_CHARS ? value : `${value.slice(0, MAX_RECORDED_CHARS)}…`
}
