import t from 'tap'
import { sha256Hex } from '@gate/sdk'
import { extractCallerIdentity } from './caller-identity.js'

t.test('bearer token gives a bearer: subject with the first 16 hex of its hash', async t => {
  const hash = sha256Hex('tok-1')
  t.same(extractCallerIdentity({ authorization: 'Bearer tok-1' }), {
    subject: `bearer:${hash.slice(0, 16)}`,
    auth_method: { method: 'bearer', token_hash: hash },
    verified: false,
    tenant: null,
    agent_id: null,
  })
  t.equal(extractCallerIdentity({ authorization: 'bearer tok-1' }).subject, `bearer:${hash.slice(0, 16)}`, 'scheme in any case')
})

t.test('bearer wins over x-api-key', async t => {
  t.match(extractCallerIdentity({ authorization: 'Bearer a', 'x-api-key': 'k' }).subject, /^bearer:/)
})

t.test('x-api-key gives an apikey: subject', async t => {
  const hash = sha256Hex('key-1')
  t.same(extractCallerIdentity({ 'x-api-key': 'key-1' }).auth_method, { method: 'api_key', key_name: 'x-api-key', key_hash: hash })
  t.equal(extractCallerIdentity({ 'x-api-key': 'key-1' }).subject, `apikey:${hash.slice(0, 16)}`)
})

t.test('empty, padded or control-character credentials are ignored and extraction falls through', async t => {
  t.match(extractCallerIdentity({ authorization: 'Bearer ', 'x-api-key': 'k' }).subject, /^apikey:/)
  t.match(extractCallerIdentity({ authorization: 'Bearer  padded', 'x-api-key': 'k' }).subject, /^apikey:/)
  t.match(extractCallerIdentity({ authorization: 'Bearer a\u0001b', 'x-api-key': 'k' }).subject, /^apikey:/)
  t.match(extractCallerIdentity({ authorization: 'Basic abc', 'x-api-key': 'k' }).subject, /^apikey:/)
  t.equal(extractCallerIdentity({ 'x-api-key': ' k' }).subject, 'anonymous')
  t.equal(extractCallerIdentity({ 'x-api-key': '' }).subject, 'anonymous')
  t.equal(extractCallerIdentity({}).subject, 'anonymous')
})
