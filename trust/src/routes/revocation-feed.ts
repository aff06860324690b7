// GET /v1/revocations: the revocation feed connected sidecars mirror (docs/fleet.md), answered as
// gate.fleet.revocation_page.v1. A cursor poll
// that doubles as a push stream: with `waitMs`, a request finding nothing past its cursor is held open
// until a revocation commits or the authority rotates (answered at once) or the wait ends (answered
// empty), so a revocation or a rotation reaches every waiting sidecar within one round trip. Another
// node's revocation on a shared PostgreSQL notifies this process at its commit (LISTEN/NOTIFY); its
// rotations do not, and the listen connection may be down: a held request also looks again every
// RECHECK_MS. Service token only.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { InvalidQueryParameterError } from '../errors.js'
import type { RevocationPage } from '../fleet/fleet-messages.js'
import type { AuthorityPort, RevocationFeedPort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters, readU64 } from '../query-params.js'

/** Page size when `limit` is absent, and the largest accepted. */
export const REVOCATION_FEED_DEFAULT_LIMIT = 500
export const REVOCATION_FEED_MAX_LIMIT = 1000
/** Longest hold: under the 30 s idle timeout common to load balancers. */
export const REVOCATION_FEED_MAX_WAIT_MS = 25_000
const RECHECK_MS = 250

export interface RevocationFeedDeps {
  auth: TrustAuthenticator
  feed: RevocationFeedPort
  authority: Pick<AuthorityPort, 'status'>
}

export function createRevocationFeedRoute(deps: RevocationFeedDeps) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'revocation feed')
      const values = readQueryParameters(url, ['cursor', 'limit', 'waitMs'])
      const cursor = Number(readU64(values, 'cursor') ?? 0n)
      if (!Number.isSafeInteger(cursor)) throw new InvalidQueryParameterError('cursor', 'an integer below 2^53', values.get('cursor') ?? '')
      const limit = bounded(values, 'limit', 1, REVOCATION_FEED_MAX_LIMIT) ?? REVOCATION_FEED_DEFAULT_LIMIT
      const waitMs = bounded(values, 'waitMs', 0, REVOCATION_FEED_MAX_WAIT_MS) ?? 0
      let page = await deps.feed.listAfter(cursor, limit)
      if (page.length === 0 && waitMs > 0) {
        const generation = deps.authority.status().generation
        page = await waitForRevocations(deps.feed, req, cursor, limit, waitMs, () => deps.authority.status().generation !== generation)
      }
      if (res.destroyed) return
      const latestSeq = await deps.feed.latestSeq()
      const authority = deps.authority.status()
      const answer: RevocationPage = {
        revocations: page,
        nextCursor: page.length === 0 ? cursor : page[page.length - 1]!.seq,
        latestSeq,
        // a sidecar re-reads /v1/authority when this moves (it follows rotations)
        authorityGeneration: authority.generation,
        authorityPublicKey: authority.publicKey,
      }
      sendJson(res, 200, answer)
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

function bounded(values: Map<string, string>, name: string, min: number, max: number): number | undefined {
  const value = readU64(values, name)
  if (value === undefined) return undefined
  if (value < BigInt(min) || value > BigInt(max)) throw new InvalidQueryParameterError(name, `an integer from ${min} to ${max}`, values.get(name) ?? '')
  return Number(value)
}

// Resolves with the first non-empty page, or an empty one when the authority rotated, the wait ends or
// the client leaves.
function waitForRevocations(
  feed: RevocationFeedPort,
  req: IncomingMessage,
  cursor: number,
  limit: number,
  waitMs: number,
  rotated: () => boolean,
): Promise<Awaited<ReturnType<RevocationFeedPort['listAfter']>>> {
  return new Promise((resolve, reject) => {
    let done = false
    let looking = false
    let again = false
    const finish = (fn: () => void) => {
      if (done) return
      done = true
      clearTimeout(deadline)
      clearInterval(tick)
      unsubscribe()
      req.socket.off('close', leave)
      fn()
    }
    const look = () => {
      if (done) return
      if (looking) {
        again = true
        return
      }
      looking = true
      feed.listAfter(cursor, limit).then(
        page => {
          looking = false
          if (page.length > 0 || rotated()) finish(() => resolve(page))
          else if (again) {
            again = false
            look()
          }
        },
        err => finish(() => reject(err)),
      )
    }
    const leave = () => finish(() => resolve([]))
    const unsubscribe = feed.onRevoked(look)
    const tick = setInterval(look, RECHECK_MS)
    const deadline = setTimeout(leave, waitMs)
    req.socket.once('close', leave)
    // a revocation committed between the first read and the subscription
    look()
  })
}
