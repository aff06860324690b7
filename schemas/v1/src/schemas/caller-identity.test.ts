import { checkSchema } from '../examples/check-schema.js'
import { callerIdentity, hex, variant } from '../examples/values.js'

const base = callerIdentity()

checkSchema(
  'gate.http.caller_identity.v1',
  [
    { name: 'a bearer identity', value: base },
    { name: 'an api_key identity', value: variant(base, (v) => (v.auth_method = { method: 'api_key', key_name: 'x-api-key', key_hash: hex(64, 3) })) },
    { name: 'a cookie identity', value: variant(base, (v) => (v.auth_method = { method: 'cookie', cookie_name: 'sid', cookie_hash: hex(64, 4) })) },
    {
      name: 'an mtls_certificate identity',
      value: variant(base, (v) => (v.auth_method = { method: 'mtls_certificate', subject_dn: 'CN=agent,O=Acme', fingerprint: hex(64, 5) })),
    },
    { name: 'the anonymous identity', value: { subject: 'anonymous', auth_method: { method: 'anonymous' } } },
    { name: 'only the required members', value: { subject: 's', auth_method: { method: 'bearer', token_hash: hex(64) } } },
    { name: 'tenant and agent_id as strings', value: variant(base, (v) => ((v.tenant = 't'), (v.agent_id = 'agent-1'), (v.verified = false))) },
  ],
  [
    { name: 'a missing subject', value: variant(base, (v) => delete v.subject), at: '(root)' },
    { name: 'an empty subject', value: variant(base, (v) => (v.subject = '')), at: '/subject' },
    { name: 'a missing auth_method', value: variant(base, (v) => delete v.auth_method), at: '(root)' },
    { name: 'an unknown auth method', value: variant(base, (v) => (v.auth_method = { method: 'basic' })), at: '/auth_method' },
    { name: 'an auth_method without its tag', value: variant(base, (v) => delete v.auth_method.method), at: '/auth_method' },
    { name: 'an uppercase token_hash', value: variant(base, (v) => (v.auth_method.token_hash = hex(64, 6).toUpperCase().replace(/^./, 'A'))), at: '/auth_method/token_hash' },
    { name: 'a 63-hex token_hash', value: variant(base, (v) => (v.auth_method.token_hash = hex(63))), at: '/auth_method/token_hash' },
    { name: 'a 65-hex token_hash', value: variant(base, (v) => (v.auth_method.token_hash = hex(65))), at: '/auth_method/token_hash' },
    { name: 'a raw token beside the hash', value: variant(base, (v) => (v.auth_method.token = 'secret')), at: '/auth_method' },
    { name: 'an api_key without key_name', value: variant(base, (v) => (v.auth_method = { method: 'api_key', key_hash: hex(64) })), at: '/auth_method' },
    { name: 'a cookie without cookie_hash', value: variant(base, (v) => (v.auth_method = { method: 'cookie', cookie_name: 'sid' })), at: '/auth_method' },
    {
      name: 'an uppercase certificate fingerprint',
      value: variant(base, (v) => (v.auth_method = { method: 'mtls_certificate', subject_dn: 'CN=a', fingerprint: 'AB'.repeat(32) })),
      at: '/auth_method/fingerprint',
    },
    { name: 'anonymous carrying a token_hash', value: { subject: 'anonymous', auth_method: { method: 'anonymous', token_hash: hex(64) } }, at: '/auth_method' },
    { name: 'anonymous with another subject', value: { subject: 'bob', auth_method: { method: 'anonymous' } }, at: '/subject' },
    { name: 'verified as a string', value: variant(base, (v) => (v.verified = 'true')), at: '/verified' },
    { name: 'a numeric tenant', value: variant(base, (v) => (v.tenant = 7)), at: '/tenant' },
    { name: 'an unknown member', value: variant(base, (v) => (v.roles = ['admin'])), at: '(root)' },
    { name: 'an array', value: [base], at: '(root)' },
  ],
)
