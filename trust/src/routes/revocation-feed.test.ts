// GET /v1/revocations: pages by cursor, holds an empty page until a revocation commits, answers empty
// when the wait ends, refuses bad parameters with 400 and callers without the service token with 401.
import t, { type Test } from 'tap'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import type { RevocationFeedEntry, RevocationFeedPort, TrustAuthenticator } from '../ports.js'
import { createRevocationFeedRoute } from './revocation-feed.js'

const TOKEN = 'feed-test-token-0123456789'

function memoryFeed(): RevocationFeedPort & { revoke(id: string): void; notify(): void; held: Promise<void> } {
  const entries: RevocationFeedEntry[] = []
  const listeners = new Set<() => void>()
  let holding!: () => void
  const held = new Promise<void>(resolve => (holding = resolve))
  return {
    /** Resolves once a request is held (it subscribed). */
    held,
    listAfter: async (after, limit) => entries.filter(e => e.seq > after).slice(0, limit),
    latestSeq: async () => entries.length,
    onRevoked(listener) {
      listeners.add(listener)
      holding()
      return () => listeners.delete(listener)
    },
    revoke(id) {
      entries.push({ seq: entries.length + 1, capabilityId: id, revokedAt: 1_700_000_000 })
      this.notify()
    },
    notify() {
      for (const l of listeners) l()
    },
  }
}

const auth: TrustAuthenticator = {
  authenticate: req => (req.headers.authorization === `Bearer ${TOKEN}` ? { ok: true, principal: { kind: 'admin' } } : { ok: false, status: 401, message: 'unauthorized' }),
}

const authority = { generation: 3 }

async function serve(t: Test, feed: RevocationFeedPort): Promise<(query: string, token?: string) => Promise<{ status: number; body: Record<string, unknown> }>> {
  const route = createRevocationFeedRoute({ auth, feed, authority: { status: () => ({ publicKey: 'ab'.repeat(32), generation: authority.generation, rotatedAt: null, trustedPublicKeys: [] }) } })
  const server: Server = createServer((req, res) => void route(req, res, {}, new URL(req.url!, 'http://x')))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/revocations`
  return async (query, token = TOKEN) => {
    const res = await fetch(`${base}${query}`, { headers: { authorization: `Bearer ${token}` } })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
}

t.test('pages by cursor with the authority generation', async t => {
  const feed = memoryFeed()
  for (const id of ['a', 'b', 'c']) feed.revoke(id)
  const get = await serve(t, feed)
  const first = await get('?limit=2')
  t.match(first, { status: 200, body: { revocations: [{ seq: 1, capabilityId: 'a' }, { seq: 2, capabilityId: 'b' }], nextCursor: 2, latestSeq: 3, authorityGeneration: authority.generation } })
  t.match(await get('?cursor=2'), { status: 200, body: { revocations: [{ capabilityId: 'c' }], nextCursor: 3 } })
  t.match(await get('?cursor=3'), { status: 200, body: { revocations: [], nextCursor: 3, latestSeq: 3 } }, 'nothing past the cursor, no wait: answered empty at once')
})

t.test('a held request is answered by the next revocation', async t => {
  const feed = memoryFeed()
  const get = await serve(t, feed)
  const held = get('?cursor=0&waitMs=25000')
  // answered by the commit, not by the 25 s wait (the test would time out otherwise)
  await feed.held
  feed.revoke('late')
  t.match(await held, { status: 200, body: { revocations: [{ seq: 1, capabilityId: 'late' }], nextCursor: 1 } })
})

t.test('a held request is answered by a rotation of the authority, with its new generation', async t => {
  const feed = memoryFeed()
  const get = await serve(t, feed)
  const held = get('?waitMs=25000')
  await feed.held
  authority.generation = 4
  feed.notify()
  t.match(await held, { status: 200, body: { revocations: [], authorityGeneration: 4 } })
})

t.test('a held request with nothing revoked answers empty when its wait ends', async t => {
  const get = await serve(t, memoryFeed())
  t.match(await get('?waitMs=1'), { status: 200, body: { revocations: [], nextCursor: 0 } })
})

t.test('bad parameters answer 400, a missing token 401', async t => {
  const get = await serve(t, memoryFeed())
  for (const query of ['?waitMs=25001', '?limit=0', '?limit=1001', '?cursor=-1', '?since=1', '?cursor=1&cursor=2']) t.equal((await get(query)).status, 400, query)
  t.equal((await get('', 'wrong-token-0123456789')).status, 401)
})
