import { checkSchema } from '../examples/check-schema.js'
import { executionNonce, hex, httpRequest, minimalHttpRequest, variant } from '../examples/values.js'

const base = httpRequest()
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']

for (const id of ['gate.http.request.v1', 'gate.http.evaluate_request.v1'] as const) {
  checkSchema(
    id,
    [
      { name: 'a full request', value: base },
      { name: 'only the required members', value: minimalHttpRequest() },
      ...METHODS.map((method) => ({ name: `method ${method}`, value: variant(base, (v) => (v.method = method)) })),
      { name: 'a null body_hash', value: variant(base, (v) => ((v.body_hash = null), (v.body_length = 0))) },
      { name: 'empty query and headers', value: variant(base, (v) => ((v.query = {}), (v.headers = {}))) },
      {
        name: 'every sidecar-only member',
        value: variant(base, (v) => {
          v.tool_server = 'pets-api'
          v.tool_name = 'updatePet'
          v.arguments = { id: '7' }
          v.model_metadata = { model_id: 'm', safety_tier: 'standard' }
          v.governed_intent = { id: 'i-1', server_id: 'pets-api', tool_name: 'updatePet', purpose: 'fix typo' }
          v.approval_token = { id: 'a-1' }
          v.approval_tokens = [{ id: 'a-2' }]
          v.threshold_approval_proposal = { id: 'p-1' }
          v.supplemental_authorization = { kind: 'x' }
          v.execution_nonce = executionNonce()
        }),
      },
    ],
    [
      { name: 'a lowercase method', value: variant(base, (v) => (v.method = 'get')), at: '/method' },
      { name: 'an unknown method', value: variant(base, (v) => (v.method = 'TRACE')), at: '/method' },
      ...['request_id', 'method', 'route_pattern', 'path', 'caller', 'timestamp'].map((member) => ({
        name: `a missing ${member}`,
        value: variant(base, (v) => delete v[member]),
        at: '(root)',
      })),
      { name: 'an empty request_id', value: variant(base, (v) => (v.request_id = '')), at: '/request_id' },
      { name: 'an uppercase body_hash', value: variant(base, (v) => (v.body_hash = hex(64).toUpperCase())), at: '/body_hash' },
      { name: 'a 63-hex body_hash', value: variant(base, (v) => (v.body_hash = hex(63))), at: '/body_hash' },
      { name: 'a negative body_length', value: variant(base, (v) => (v.body_length = -1)), at: '/body_length' },
      { name: 'a fractional body_length', value: variant(base, (v) => (v.body_length = 1.5)), at: '/body_length' },
      { name: 'a negative timestamp', value: variant(base, (v) => (v.timestamp = -1)), at: '/timestamp' },
      { name: 'a string timestamp', value: variant(base, (v) => (v.timestamp = '1735689600')), at: '/timestamp' },
      { name: 'a numeric query value', value: variant(base, (v) => (v.query = { page: 2 })), at: '/query/page' },
      { name: 'a repeated query value as an array', value: variant(base, (v) => (v.query = { tag: ['a', 'b'] })), at: '/query/tag' },
      { name: 'a raw Authorization header', value: variant(base, (v) => (v.headers.Authorization = 'Bearer x')), at: '/headers' },
      { name: 'a raw authorization header', value: variant(base, (v) => (v.headers.authorization = 'Bearer x')), at: '/headers' },
      { name: 'a raw COOKIE header', value: variant(base, (v) => (v.headers.COOKIE = 'sid=1')), at: '/headers' },
      { name: 'a raw proxy-authorization header', value: variant(base, (v) => (v.headers['proxy-authorization'] = 'Basic x')), at: '/headers' },
      { name: 'a misspelt member', value: variant(base, (v) => (v.capabilty_id = 'cap-7')), at: '(root)' },
      { name: 'a null session_id as a number', value: variant(base, (v) => (v.session_id = 0)), at: '/session_id' },
      { name: 'an invalid caller', value: variant(base, (v) => (v.caller.auth_method = { method: 'basic' })), at: '/caller/auth_method' },
      { name: 'an execution_nonce of another schema', value: variant(base, (v) => (v.execution_nonce = { ...executionNonce(), schema: 'gate.nonce.v1' })), at: '/execution_nonce/schema' },
      { name: 'approval_tokens as an object', value: variant(base, (v) => (v.approval_tokens = { id: 'a' })), at: '/approval_tokens' },
      { name: 'arguments as an array', value: variant(base, (v) => (v.arguments = ['7'])), at: '/arguments' },
      { name: 'a string body', value: 'POST /pets', at: '(root)' },
    ],
  )
}
