// The hosted edge's refusal codes against the documented table (schemas/v1/README.md, "Hosted error
// codes"), both ways, and every refusal's body. (The sidecar's hosted-edge tests validate each body they
// receive against gate.hosted.error.v1: testing/mcp-http-session.ts.)
import t from 'tap'
import { readFileSync } from 'node:fs'
import { ERROR_STATUS } from '@gate/sdk'
import {
  CapacityExhaustedError,
  EdgeDrainingError,
  HOSTED_ERROR_CODES,
  HostedBadRequestError,
  HostedForbiddenError,
  HostedMethodNotAllowedError,
  HostedPayloadTooLargeError,
  HostedUnauthorizedError,
  NotAcceptableError,
  ProtocolVersionMismatchError,
  ReplayWindowExceededError,
  SessionNotFoundError,
  SessionNotReadyError,
  SessionTerminatedError,
  StreamAlreadyOpenError,
  TooManySessionsError,
  UnsupportedMediaTypeError,
  type HostedEdgeError,
} from './errors.js'
import { hostedErrorBody } from './hosted-http.js'

const readme = readFileSync(new URL('../../schemas/v1/README.md', import.meta.url), 'utf8')
const table = readme.slice(readme.indexOf('Hosted error codes'))
const rows = [...table.matchAll(/^\| `(gate_[a-z_]+)` \| (\d{3})[^|]*\| (never|either|always) \|/gm)].map(m => ({ code: m[1]!, status: Number(m[2]), transient: m[3]! }))
// documented codes the edge never answers in a plain-HTTP body: a refused initialize is a JSON-RPC
// error; the cluster and internal codes belong to other hosted surfaces
const NOT_PLAIN_HTTP = ['gate_unsupported_protocol_version', 'gate_stale_term', 'gate_internal_error', 'gate_quorum_unavailable']

t.test('the refusal codes are the documented table, both ways, with its statuses and transience', async t => {
  t.ok(rows.length >= 15, `${rows.length} rows read`)
  t.same([...HOSTED_ERROR_CODES].sort(), rows.map(r => r.code).filter(code => !NOT_PLAIN_HTTP.includes(code)).sort())
  const refusals: HostedEdgeError[] = [
    new HostedBadRequestError('Invalid Request: x'),
    new ProtocolVersionMismatchError('2024-01-01', '2025-11-25'),
    new HostedUnauthorizedError(),
    new HostedForbiddenError('Host evil.example is not this edge'),
    new SessionNotFoundError(),
    new SessionTerminatedError('the session expired'),
    new SessionNotReadyError('tools/call'),
    new NotAcceptableError('text/event-stream'),
    new ReplayWindowExceededError('s-9', 'is outside the retained window of 100 events'),
    new StreamAlreadyOpenError(),
    new HostedPayloadTooLargeError(1024),
    new UnsupportedMediaTypeError(),
    new CapacityExhaustedError('streams', 64),
    new TooManySessionsError(4, 30),
    new EdgeDrainingError(),
  ]
  t.same([...new Set(refusals.map(e => e.code))].sort(), [...HOSTED_ERROR_CODES].sort(), 'a class for every code')
  for (const err of refusals) {
    const row = rows.find(r => r.code === err.code)!
    t.equal(err.status, row.status, `${err.name}: status ${row.status}`)
    t.equal(ERROR_STATUS[err.code], row.status, `${err.code} in @gate/sdk's table`)
    if (row.transient !== 'either') t.equal(err.transient, row.transient === 'always', `${err.code} is ${row.transient} transient`)
    t.same(hostedErrorBody(err), { error: err.code, message: err.message, transient: err.transient, retry_guidance: err.retryGuidance }, `${err.name}'s body`)
  }
  const notAllowed = new HostedMethodNotAllowedError()
  t.match(notAllowed, { code: 'gate_bad_request', status: 405, headers: { allow: 'GET, POST, DELETE' } }, 'another method: 405, still gate_bad_request')
  t.match(new TooManySessionsError(4, 30).headers, { 'retry-after': '30' })
})
