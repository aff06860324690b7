// Bearer authentication: every candidate is compared, one 401 for absent and unknown tokens, tokens
// validated once at construction and never echoed.
import t from 'tap'
import type { IncomingMessage } from 'node:http'
import { createTrustAuthenticator, UNAUTHORIZED_MESSAGE } from './auth.js'

const admin = 'admin-service-token-0123456789'
const acme = 'acme-tenant-token-0123456789ab'

function req(authorization?: string): IncomingMessage {
  return { headers: authorization === undefined ? {} : { authorization }, rawHeaders: authorization === undefined ? [] : ['Authorization', authorization] } as unknown as IncomingMessage
}

t.test('the admin token resolves the admin principal, a tenant token its tenant', async t => {
  const auth = createTrustAuthenticator({ serviceToken: admin, tenantTokens: new Map([['acme', acme]]) })
  t.same(auth.authenticate(req(`Bearer ${admin}`)), { ok: true, principal: { kind: 'admin' } })
  t.same(auth.authenticate(req(`bearer ${acme}`)), { ok: true, principal: { kind: 'tenant', tenant: 'acme' } }, 'scheme is case-insensitive')
})

t.test('absent, malformed and unknown tokens get the identical 401', async t => {
  const auth = createTrustAuthenticator({ serviceToken: admin })
  const answers = [undefined, '', 'Bearer', 'Bearer ', `Basic ${admin}`, `Bearer ${admin}x`, `Bearer ${admin.slice(0, -1)}`, `Bearer ${admin} extra`].map(h => auth.authenticate(req(h)))
  for (const answer of answers) t.same(answer, { ok: false, status: 401, message: UNAUTHORIZED_MESSAGE })
})

t.test('weak, duplicated or missing tokens are refused at construction, without echoing them', async t => {
  t.throws(() => createTrustAuthenticator({}), { code: 'gate_invalid_config' })
  t.throws(() => createTrustAuthenticator({ serviceToken: 'short' }), { code: 'gate_invalid_config', message: /at least 16 characters/ })
  t.throws(() => createTrustAuthenticator({ serviceToken: 'has a space in it 0123456789' }), { code: 'gate_invalid_config' })
  t.throws(() => createTrustAuthenticator({ serviceToken: admin, tenantTokens: new Map([['acme', admin]]) }), { message: /not used by another principal/ })
  t.throws(() => createTrustAuthenticator({ serviceToken: admin, tenantTokens: new Map([['bad tenant', acme]]) }), { message: /tenant id/ })
  try {
    createTrustAuthenticator({ serviceToken: 'short-secret' })
  } catch (err) {
    t.notMatch((err as Error).message, /short-secret/)
  }
})

t.test('a repeated Authorization header gets the identical 401, even when one of them is right', async t => {
  const auth = createTrustAuthenticator({ serviceToken: admin })
  const twice = { headers: { authorization: `Bearer ${admin}` }, rawHeaders: ['Authorization', `Bearer ${admin}`, 'authorization', 'Bearer other'] } as unknown as IncomingMessage
  t.same(auth.authenticate(twice), { ok: false, status: 401, message: UNAUTHORIZED_MESSAGE })
})
