import { checkSchema } from '../examples/check-schema.js'
import { denyVerdict, variant } from '../examples/values.js'

const deny = denyVerdict()
const DETAIL_NAMES = [
  'tool_name',
  'tool_server',
  'requested_action',
  'required_scope',
  'granted_scope',
  'reason_code',
  'receipt_id',
  'hint',
  'docs_url',
]

checkSchema(
  'gate.http.verdict.v1',
  [
    { name: 'allow', value: { verdict: 'allow' } },
    { name: 'a full deny', value: deny },
    { name: 'a deny without http_status or details', value: { verdict: 'deny', reason: 'r', guard: 'CapabilityGuard' } },
    { name: 'a deny with http_status 100', value: variant(deny, (v) => (v.http_status = 100)) },
    { name: 'a deny with http_status 599', value: variant(deny, (v) => (v.http_status = 599)) },
    ...DETAIL_NAMES.map((name) => ({ name: `details.${name} alone`, value: variant(deny, (v) => (v.details = { [name]: 'x' })) })),
    ...DETAIL_NAMES.map((name) => ({ name: `details.${name} null`, value: variant(deny, (v) => (v.details = { [name]: null })) })),
    { name: 'cancel', value: { verdict: 'cancel', reason: 'evaluation timed out' } },
    { name: 'incomplete', value: { verdict: 'incomplete', reason: 'execution nonce required' } },
  ],
  [
    { name: 'http_status 99', value: variant(deny, (v) => (v.http_status = 99)), at: '/http_status' },
    { name: 'http_status 600', value: variant(deny, (v) => (v.http_status = 600)), at: '/http_status' },
    { name: 'a fractional http_status', value: variant(deny, (v) => (v.http_status = 403.5)), at: '/http_status' },
    { name: 'a string http_status', value: variant(deny, (v) => (v.http_status = '403')), at: '/http_status' },
    { name: 'an unknown verdict', value: { verdict: 'block' }, at: '(root)' },
    { name: "the core receipt's cancelled tag", value: { verdict: 'cancelled', reason: 'r' }, at: '(root)' },
    { name: 'an uppercase tag', value: { verdict: 'ALLOW' }, at: '(root)' },
    { name: 'no tag', value: { reason: 'r' }, at: '(root)' },
    { name: 'a non-string tag', value: { verdict: true }, at: '(root)' },
    { name: 'a deny without reason', value: variant(deny, (v) => delete v.reason), at: '(root)' },
    { name: 'a deny without guard', value: variant(deny, (v) => delete v.guard), at: '(root)' },
    { name: 'empty details (omitted when empty)', value: variant(deny, (v) => (v.details = {})), at: '/details' },
    { name: 'an unknown details member', value: variant(deny, (v) => (v.details = { severity: 'high' })), at: '/details' },
    { name: 'a numeric details member', value: variant(deny, (v) => (v.details = { hint: 3 })), at: '/details/hint' },
    { name: 'an allow with a reason', value: { verdict: 'allow', reason: 'r' }, at: '(root)' },
    { name: 'a cancel without reason', value: { verdict: 'cancel' }, at: '(root)' },
    { name: 'a cancel with http_status', value: { verdict: 'cancel', reason: 'r', http_status: 500 }, at: '(root)' },
    { name: 'a bare string', value: 'allow', at: '(root)' },
  ],
)
