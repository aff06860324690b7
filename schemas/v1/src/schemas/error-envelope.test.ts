import { checkSchema } from '../examples/check-schema.js'
import { variant, type Example } from '../examples/values.js'

const CATEGORIES = ['protocol', 'auth', 'capability', 'guard', 'budget', 'tool', 'internal', 'transaction']
const base: Example = {
  jsonrpc: '2.0',
  id: 1,
  error: {
    code: -32600,
    message: 'unsupported protocol version',
    data: {
      gateError: { code: 1000, category: 'protocol', transient: false, retry_guidance: 'use protocolVersion 2025-11-25' },
      supported: ['2025-11-25'],
    },
  },
}

checkSchema(
  'gate.http.error_envelope.v1',
  [
    { name: 'an integer id with a gateError', value: base },
    { name: 'a string id', value: variant(base, (v) => (v.id = 'req-1')) },
    { name: 'a null id', value: variant(base, (v) => (v.id = null)) },
    { name: 'no data', value: variant(base, (v) => delete v.error.data) },
    { name: 'data without gateError', value: variant(base, (v) => (v.error.data = { detail: 'x' })) },
    ...CATEGORIES.map((category) => ({
      name: `category ${category}`,
      value: variant(base, (v) => (v.error.data.gateError.category = category)),
    })),
  ],
  [
    { name: 'jsonrpc 1.0', value: variant(base, (v) => (v.jsonrpc = '1.0')), at: '/jsonrpc' },
    { name: 'a numeric jsonrpc', value: variant(base, (v) => (v.jsonrpc = 2)), at: '/jsonrpc' },
    { name: 'a missing id', value: variant(base, (v) => delete v.id), at: '(root)' },
    { name: 'a fractional id', value: variant(base, (v) => (v.id = 1.5)), at: '/id' },
    { name: 'a boolean id', value: variant(base, (v) => (v.id = true)), at: '/id' },
    { name: 'a result beside the error', value: variant(base, (v) => (v.result = {})), at: '(root)' },
    { name: 'a missing error', value: variant(base, (v) => delete v.error), at: '(root)' },
    { name: 'an error without code', value: variant(base, (v) => delete v.error.code), at: '/error' },
    { name: 'a string error code', value: variant(base, (v) => (v.error.code = '-32600')), at: '/error/code' },
    { name: 'an error without message', value: variant(base, (v) => delete v.error.message), at: '/error' },
    { name: 'an unknown error member', value: variant(base, (v) => (v.error.status = 400)), at: '/error' },
    { name: 'data as a string', value: variant(base, (v) => (v.error.data = 'x')), at: '/error/data' },
    { name: 'an unknown category', value: variant(base, (v) => (v.error.data.gateError.category = 'network')), at: '/error/data/gateError/category' },
    { name: 'a gateError without transient', value: variant(base, (v) => delete v.error.data.gateError.transient), at: '/error/data/gateError' },
    { name: 'a gateError without retry guidance', value: variant(base, (v) => delete v.error.data.gateError.retry_guidance), at: '/error/data/gateError' },
    { name: 'a negative gate code', value: variant(base, (v) => (v.error.data.gateError.code = -1)), at: '/error/data/gateError/code' },
    { name: 'an unknown gateError member', value: variant(base, (v) => (v.error.data.gateError.http_status = 400)), at: '/error/data/gateError' },
  ],
)
