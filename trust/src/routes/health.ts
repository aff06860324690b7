// GET /health (spec 03): per-node health without authentication. A node over a shared database is
// clustered and carries the cluster block (cluster.ts); a single SQLite node is not, and has none.
// `federation` says federation is off; `capabilities` is this node's spec 03 negotiation envelope
// (gate.capabilities.v1), which a joining service or peer reads before it ships anything. No build identifier is published
// (spec 03, clustered upgrade procedure) and no store paths either (the route is unauthenticated).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { localCapabilities } from '@gate/sdk'
import { sendJson } from '@gate/sdk/server'
import type { AuthorityMessage } from '../fleet/fleet-messages.js'
import type { AuthorityPort, ClusterPort, HealthPort } from '../ports.js'

export function createTrustHealthRoute(deps: { authority: AuthorityPort; health: HealthPort; cluster?: ClusterPort }) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    const stores = deps.health.stores()
    const healthy = Object.values(stores).every(store => store.healthy)
    sendJson(res, healthy ? 200 : 503, {
      status: healthy ? 'healthy' : 'unhealthy',
      clustered: deps.cluster !== undefined,
      ...(deps.cluster === undefined ? {} : { cluster: deps.cluster.block() }),
      authority: authorityBlock(deps.authority),
      stores: {
        healthy,
        backends: Object.fromEntries(Object.entries(stores).map(([name, store]) => [name, store.backend])),
        unhealthy: Object.entries(stores).filter(([, store]) => !store.healthy).map(([name]) => name),
      },
      federation: { enabled: false, providerCount: 0 },
      capabilities: localCapabilities(),
    })
  }
}

/** The spec 03 authority block (gate.fleet.authority.v1): publicKey, generation, rotatedAt, trustedPublicKeys, trustedKeyCount. */
export function authorityBlock(authority: AuthorityPort): AuthorityMessage {
  const status = authority.status()
  return { ...status, trustedKeyCount: status.trustedPublicKeys.length }
}
