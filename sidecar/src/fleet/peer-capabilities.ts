// The capability negotiation with trust-control (spec 03 `gate.capabilities.v1`, docs/fleet.md): its
// envelope is read from its GET /health, and this service uses the intersection of both sides'
// features. Fail closed: an envelope that is missing, malformed or of another schema id, or an
// intersection without a feature this service needs (`accepts_hybrid_signatures` when it signs with a
// hybrid key: trust-control would refuse every receipt it ships), is gate_incompatible_peer: the start
// is refused, and a service that could not read the envelope at start neither enrols its key nor
// ships receipts until it has agreed.
import { agreeWithPeer, type GateFeature } from '@gate/sdk'
import { type ControlConnection, ControlRefusedError } from './control-connection.js'

const TIMEOUT_MS = 5000

/** The features a service signing with `publicKey` needs trust-control to accept. */
export function requiredFeatures(publicKey: string): GateFeature[] {
  return publicKey.startsWith('hybrid:') ? ['accepts_hybrid_signatures'] : []
}

/**
 * Reads trust-control's envelope and negotiates: the agreed features. Rejects with IncompatiblePeerError
 * (gate_incompatible_peer) when the peer is incompatible, and with the connection's error when it cannot
 * be read (unreachable, or no health answer: a trust-control still starting).
 */
export async function negotiateWithControl(connection: ControlConnection, required: readonly GateFeature[]): Promise<ReadonlySet<string>> {
  const peer = `trust-control ${connection.origin}`
  // /health answers 503 while a store is down: its envelope is still the node's. A starting
  // trust-control answers 503 with an error body, no health: not read yet, asked again later.
  const { status, body } = await connection.get('/health', TIMEOUT_MS)
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { status?: unknown }).status !== 'string') {
    throw new ControlRefusedError(connection.origin, status, 'GET /health is no health answer (yet)')
  }
  return agreeWithPeer((body as { capabilities?: unknown }).capabilities, peer, required)
}
