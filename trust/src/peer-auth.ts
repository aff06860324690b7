// The `gate.cluster.peer.v1` peer-authentication scheme of the internal cluster routes (spec 03,
// Authentication 3). A peer sends its node id (its advertise URL), the Unix second it signed at, its
// election term, and a SHA-256 digest over the canonical JSON of {scheme, serviceToken, nodeId,
// endpoint, issuedAt, term}; the receiver recomputes it with its own copy of the service token and its
// own URL as the endpoint (so a digest made for one node does not open another), within 60 s of skew.
// The token itself never travels. A different scheme constant yields digests nobody reproduces.
//
// Headers (spec 03 names only the first; the others are Gate's, docs/postgres.md):
//   x-gate-cluster-node-id    the sender's node id; must be in the receiver's peer allowlist (else 403)
//   x-gate-cluster-issued-at  Unix seconds when the digest was made
//   x-gate-cluster-term       the sender's election term (optional; digested as null when absent)
//   x-gate-cluster-digest     64 lowercase hex
// A request without the node id header (a bearer token alone, or nothing) gets 401 with
// `WWW-Authenticate: gate.cluster.peer.v1`, as does a bad digest, a stale time or a malformed header.
import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { canonicalJson, sha256Hex } from '@gate/sdk'
import { PEER_AUTH_SCHEME, PeerAuthError } from './errors.js'

/** The peer-auth header names. */
export const PEER_HEADERS = Object.freeze({
  nodeId: 'x-gate-cluster-node-id',
  issuedAt: 'x-gate-cluster-issued-at',
  term: 'x-gate-cluster-term',
  digest: 'x-gate-cluster-digest',
})

/** Clock skew accepted between peers (spec 03, Limits). */
export const PEER_AUTH_SKEW_SECONDS = 60

/** The members a digest covers. */
export interface PeerDigestInput {
  serviceToken: string
  nodeId: string
  /** The receiver's advertise URL followed by the request path. */
  endpoint: string
  issuedAt: number
  term: number | null
}

/** SHA-256 (hex) of the canonical JSON of the scheme and `input`; `scheme` is fixed except to show another scheme fails. */
export function peerDigest(input: PeerDigestInput, scheme: string = PEER_AUTH_SCHEME): string {
  return sha256Hex(canonicalJson({ scheme, serviceToken: input.serviceToken, nodeId: input.nodeId, endpoint: input.endpoint, issuedAt: input.issuedAt, term: input.term }))
}

/** The headers a peer sends to `endpoint` (the receiver's URL + path). */
export function peerAuthHeaders(options: { serviceToken: string; nodeId: string; endpoint: string; term?: number; now?: number; scheme?: string }): Record<string, string> {
  const issuedAt = options.now ?? Math.floor(Date.now() / 1000)
  const term = options.term ?? null
  const headers: Record<string, string> = {
    [PEER_HEADERS.nodeId]: options.nodeId,
    [PEER_HEADERS.issuedAt]: String(issuedAt),
    [PEER_HEADERS.digest]: peerDigest({ serviceToken: options.serviceToken, nodeId: options.nodeId, endpoint: options.endpoint, issuedAt, term }, options.scheme),
  }
  if (term !== null) headers[PEER_HEADERS.term] = String(term)
  return headers
}

/** Options of `createPeerAuthenticator`. */
export interface PeerAuthenticatorOptions {
  serviceToken: string
  /** This node's advertise URL (the endpoint digests are made for). */
  selfUrl: string
  /** Node ids allowed to call: the configured peers (or, without any, the nodes the cluster has seen). */
  allowlist: () => readonly string[]
  /** Unix seconds. */
  now?: () => number
}

const DIGEST = /^[0-9a-f]{64}$/
const UINT = /^[0-9]{1,15}$/

/** A verifier of peer requests: returns when `req` (for `path`) is authentic, else throws PeerAuthError. */
export function createPeerAuthenticator(options: PeerAuthenticatorOptions): (req: IncomingMessage, path: string) => void {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000))
  return (req, path) => {
    const nodeId = single(req, PEER_HEADERS.nodeId)
    if (nodeId === undefined) throw new PeerAuthError(401, `peer authentication required (${PEER_AUTH_SCHEME})`)
    if (!options.allowlist().includes(nodeId)) throw new PeerAuthError(403, `peer ${JSON.stringify(nodeId.slice(0, 200))} is not in the configured allowlist`)
    const issuedAtText = single(req, PEER_HEADERS.issuedAt)
    const digest = single(req, PEER_HEADERS.digest)
    const termText = single(req, PEER_HEADERS.term)
    if (issuedAtText === undefined || !UINT.test(issuedAtText) || digest === undefined || !DIGEST.test(digest) || (termText !== undefined && !UINT.test(termText))) {
      throw new PeerAuthError(401, `malformed ${PEER_AUTH_SCHEME} headers`)
    }
    const issuedAt = Number(issuedAtText)
    if (Math.abs(now() - issuedAt) > PEER_AUTH_SKEW_SECONDS) throw new PeerAuthError(401, `peer request issued outside the ${PEER_AUTH_SKEW_SECONDS} s clock-skew window`)
    const expected = peerDigest({ serviceToken: options.serviceToken, nodeId, endpoint: options.selfUrl + path, issuedAt, term: termText === undefined ? null : Number(termText) })
    // constant time: the digest is a MAC over the shared service token
    if (!timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(digest, 'hex'))) throw new PeerAuthError(401, `${PEER_AUTH_SCHEME} digest does not verify`)
  }
}

// One value of a header; repeated or empty counts as absent (and fails closed above).
function single(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}
