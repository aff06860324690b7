import t from 'tap'
import fc from 'fast-check'
import { callerIdentityHash, canonicalJson, contentHash, sha256Hex, ANONYMOUS_CALLER } from '../index.js'

t.test('content_hash is SHA-256 of the canonical five-member object', async t => {
  const req = { method: 'POST', path: '/pets', route_pattern: '/pets', query: { b: '2', a: '1' }, body_hash: 'ab'.repeat(32) }
  t.equal(contentHash(req), sha256Hex('{"body_hash":"' + 'ab'.repeat(32) + '","method":"POST","path":"/pets","query":{"a":"1","b":"2"},"route_pattern":"/pets"}'))
})

t.test('property: content_hash is the hash of canonicalJson of the five members, whatever they hold', async () => {
  const text = fc.string({ unit: 'binary', maxLength: 12 })
  fc.assert(
    fc.property(fc.record({ method: text, path: text, route_pattern: text, query: fc.option(fc.dictionary(text, text), { nil: undefined }), body_hash: fc.option(text, { nil: null }) }), r =>
      contentHash(r) === sha256Hex(canonicalJson({ body_hash: r.body_hash, method: r.method, path: r.path, query: r.query ?? {}, route_pattern: r.route_pattern })),
    ),
    { numRuns: 500, seed: 33 },
  )
})

t.test('absent query and body hash mean {} and null', async t => {
  t.equal(contentHash({ method: 'GET', path: '/', route_pattern: '/' }), sha256Hex('{"body_hash":null,"method":"GET","path":"/","query":{},"route_pattern":"/"}'))
})

t.test('the same identity always yields the same hash, defaults or not', async t => {
  const minimal = { subject: 'anonymous', auth_method: { method: 'anonymous' as const } }
  t.equal(callerIdentityHash(minimal), callerIdentityHash(ANONYMOUS_CALLER))
  t.equal(
    callerIdentityHash(minimal),
    sha256Hex(canonicalJson({ subject: 'anonymous', auth_method: { method: 'anonymous' }, verified: false, tenant: null, agent_id: null })),
  )
  t.not(callerIdentityHash({ ...minimal, tenant: 'acme' }), callerIdentityHash(minimal))
})
