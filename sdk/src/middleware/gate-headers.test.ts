// The one Gate-header reader of the SDK, `gate api protect` and the sidecar: the repeated-header rule
// and the value rules, on Node's header shapes (joined values plus rawHeaders) and on plain records.
import t from 'tap'
import { readGateHeaders } from './gate-headers.js'

const NONCE = '0123456789abcdef0123456789abcdef'

/** Node's view of a request: `headers` with repeats joined by ", ", and the raw field lines. */
function nodeHeaders(lines: [string, string][]): { headers: Record<string, string>; rawHeaders: string[] } {
  const headers: Record<string, string> = {}
  for (const [name, value] of lines) {
    const key = name.toLowerCase()
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`
  }
  return { headers, rawHeaders: lines.flat() }
}

t.test('absent Gate headers read as undefined; the query capability fills in', async t => {
  t.same(readGateHeaders({ accept: '*/*' }, ['Accept', '*/*']), { capability: undefined, approvalId: undefined, nonceId: undefined })
  t.same(readGateHeaders({}, [], '{"id":"q"}'), { capability: '{"id":"q"}', approvalId: undefined, nonceId: undefined })
})

t.test('the capability header wins over the query parameter', async t => {
  const { headers, rawHeaders } = nodeHeaders([['X-Gate-Capability', 'from-header']])
  t.equal(readGateHeaders(headers, rawHeaders, 'from-query').capability, 'from-header')
})

t.test('each Gate header sent on two field lines answers 400, even with equal values', async t => {
  for (const name of ['X-Gate-Capability', 'x-gate-approval-id', 'X-GATE-EXECUTION-NONCE']) {
    for (const [first, second] of [
      [NONCE, NONCE],
      [NONCE, 'f'.repeat(32)],
    ] as const) {
      const { headers, rawHeaders } = nodeHeaders([
        [name, first],
        ['accept', '*/*'],
        [name, second],
      ])
      t.throws(() => readGateHeaders(headers, rawHeaders), { code: 'gate_bad_request', status: 400, message: /is repeated/ }, `${name}: ${first === second ? 'equal' : 'different'} values`)
    }
  }
})

t.test('a header kept as an array counts its values; one value is not a repeat', async t => {
  t.equal(readGateHeaders({ 'x-gate-execution-nonce': [NONCE] }, undefined).nonceId, NONCE)
  t.equal(readGateHeaders({ 'x-gate-execution-nonce': [] }, undefined).nonceId, undefined)
  t.throws(() => readGateHeaders({ 'x-gate-capability': ['a', 'a'] }, undefined), { code: 'gate_bad_request', message: /is repeated/ })
})

t.test('without raw field lines, a joined value is judged by the value rules alone', async t => {
  // Web Headers (the edge) join repeats with ", " before Gate sees them: the nonce and the approval id
  // then fail their format; a joined capability goes on as one (invalid) token, denied by the sidecar
  t.throws(() => readGateHeaders({ 'x-gate-execution-nonce': `${NONCE}, ${NONCE}` }, undefined), { code: 'gate_bad_request', message: /malformed/ })
  t.throws(() => readGateHeaders({ 'x-gate-approval-id': 'a1, a1' }, undefined), { code: 'gate_bad_request', message: /one printable token/ })
  t.equal(readGateHeaders({ 'x-gate-capability': 'a, a' }, undefined).capability, 'a, a')
})

t.test('blank or malformed values answer 400', async t => {
  for (const [name, value, message] of [
    ['x-gate-capability', '', /blank/],
    ['x-gate-capability', '   ', /blank/],
    ['x-gate-approval-id', '', /blank/],
    ['x-gate-approval-id', 'two words', /one printable token/],
    ['x-gate-approval-id', 'é', /one printable token/],
    ['x-gate-execution-nonce', '', /blank/],
    ['x-gate-execution-nonce', NONCE.toUpperCase(), /malformed/],
    ['x-gate-execution-nonce', NONCE.slice(1), /malformed/],
  ] as const) {
    t.throws(() => readGateHeaders({ [name]: value }, [name, value]), { code: 'gate_bad_request', status: 400, message }, `${name}: ${JSON.stringify(value)}`)
  }
})

t.test('well-formed values are returned as sent', async t => {
  const { headers, rawHeaders } = nodeHeaders([
    ['X-Gate-Capability', '{"id":"cap_1"}'],
    ['X-Gate-Approval-Id', 'apr_01J9'],
    ['X-Gate-Execution-Nonce', NONCE],
  ])
  t.same(readGateHeaders(headers, rawHeaders, 'ignored'), { capability: '{"id":"cap_1"}', approvalId: 'apr_01J9', nonceId: NONCE })
})
