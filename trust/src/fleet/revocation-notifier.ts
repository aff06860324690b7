// The revocation feed sidecars mirror (GET /v1/revocations, routes/revocation-feed.ts) over the
// revocation store, and the revoker and authority that tell it: they wrap the ports so a held request
// answers the moment a revocation or a rotation commits on this node, and a revocation committed on
// another node the moment the store hears of it (`watch`: PostgreSQL LISTEN/NOTIFY); the route's
// periodic look covers the rest (another node's rotation, a lost listen connection).
import type { AuthorityPort, RevocationFeedPort, RevocationPort } from '../ports.js'
import type { TrustStores } from '../store-ports.js'

/** The feed, and the revoker and authority that notify it. */
export function createRevocationFeed<A extends AuthorityPort>(
  stores: Pick<TrustStores, 'revocations'>,
  revoker: RevocationPort,
  authority: A,
): { feed: RevocationFeedPort; revoker: RevocationPort; authority: A } {
  const listeners = new Set<() => void>()
  const notify = () => {
    for (const listener of listeners) listener()
  }
  return {
    authority: {
      ...authority,
      async rotate(options) {
        const status = await authority.rotate(options)
        notify()
        return status
      },
    },
    feed: {
      listAfter: (afterSeq, limit) => stores.revocations.listAfter(afterSeq, limit),
      latestSeq: () => stores.revocations.latestSeq(),
      onRevoked(listener) {
        listeners.add(listener)
        const unwatch = stores.revocations.watch?.(listener)
        return () => {
          listeners.delete(listener)
          unwatch?.()
        }
      },
    },
    revoker: {
      async revoke(capabilityId) {
        const result = await revoker.revoke(capabilityId)
        if (result.newlyRevoked) notify()
        return result
      },
    },
  }
}
