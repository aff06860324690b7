// The capability negotiation envelope (spec 03, `gate.capabilities.v1`): a peer advertises a
// string-keyed boolean map of features, and both sides use the intersection of what each advertises
// as true. Fail closed: an envelope of another schema id, a malformed feature name (anything but lower
// snake case, Gate's reading of "malformed", as the schema says) or a value that is not a boolean
// makes the whole envelope unusable; it is never read in part. A well-formed name this side does not
// know is simply not in the intersection. Where Gate serves and reads it: docs/capabilities.md.
import { IncompatiblePeerError } from '../errors.js'

export const CAPABILITIES_SCHEMA = 'gate.capabilities.v1'

/** The initial features (spec 03). */
export type GateFeature = 'accepts_anchor_batch_v1' | 'accepts_hybrid_signatures' | 'delegation_chain_binding'

export interface CapabilitiesEnvelope {
  schema: typeof CAPABILITIES_SCHEMA
  features: Record<string, boolean>
}

/**
 * What this build of Gate does: it verifies (and signs) hybrid signatures and binds delegation links to
 * their parent scope (`scope_hash`, docs/capabilities.md); it does not take anchor batches.
 */
export const GATE_FEATURES: Readonly<Record<GateFeature, boolean>> = Object.freeze({
  accepts_anchor_batch_v1: false,
  accepts_hybrid_signatures: true,
  delegation_chain_binding: true,
})

const FEATURE_NAME = /^[a-z][a-z0-9_]{0,63}$/
const MAX_FEATURES = 64

/** This side's envelope. */
export function localCapabilities(): CapabilitiesEnvelope {
  return { schema: CAPABILITIES_SCHEMA, features: { ...GATE_FEATURES } }
}

/** Reads a peer's envelope; throws IncompatiblePeerError (gate_incompatible_peer) naming what is wrong. */
export function parseCapabilities(value: unknown, peer = 'the peer'): CapabilitiesEnvelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new IncompatiblePeerError(peer, 'its capabilities envelope is not a JSON object')
  const v = value as Record<string, unknown>
  if (v.schema !== CAPABILITIES_SCHEMA) throw new IncompatiblePeerError(peer, `unsupported capabilities schema ${JSON.stringify(v.schema)} (this side reads ${CAPABILITIES_SCHEMA})`)
  for (const key of Object.keys(v)) if (key !== 'schema' && key !== 'features') throw new IncompatiblePeerError(peer, `unknown member ${JSON.stringify(key)} in its capabilities envelope`)
  const features = v.features
  if (typeof features !== 'object' || features === null || Array.isArray(features)) throw new IncompatiblePeerError(peer, 'features must be an object of booleans')
  const entries = Object.entries(features)
  if (entries.length > MAX_FEATURES) throw new IncompatiblePeerError(peer, `more than ${MAX_FEATURES} features`)
  const out: Record<string, boolean> = {}
  for (const [name, on] of entries) {
    if (!FEATURE_NAME.test(name)) throw new IncompatiblePeerError(peer, `malformed feature name ${JSON.stringify(name.slice(0, 80))} (lower snake case expected)`)
    if (typeof on !== 'boolean') throw new IncompatiblePeerError(peer, `feature ${name} must be true or false`)
    out[name] = on
  }
  return { schema: CAPABILITIES_SCHEMA, features: out }
}

/** The features both envelopes advertise as true: what the two peers use. */
export function negotiateFeatures(local: CapabilitiesEnvelope, remote: CapabilitiesEnvelope): ReadonlySet<string> {
  const agreed = new Set<string>()
  for (const [name, on] of Object.entries(local.features)) if (on && remote.features[name] === true) agreed.add(name)
  return agreed
}

/** Parses `remote` and negotiates with this side; throws IncompatiblePeerError when a `required` feature is not agreed. */
export function agreeWithPeer(remote: unknown, peer: string, required: readonly GateFeature[] = []): ReadonlySet<string> {
  const agreed = negotiateFeatures(localCapabilities(), parseCapabilities(remote, peer))
  for (const feature of required) if (!agreed.has(feature)) throw new IncompatiblePeerError(peer, `does not advertise ${feature}, which this side needs`)
  return agreed
}
