// Options are validated at construction, each message naming the option, what was expected and what
// arrived; defaults live in one frozen object; GATE_SIDECAR_URL sits between the option and the default.
import t from 'tap'
import { DEFAULTS, resolveGateOptions, createGateCore } from '../index.js'

t.test('DEFAULTS follow spec 02: 5000 ms, 127.0.0.1:9090, fail closed, local receipt checks', async t => {
  t.ok(Object.isFrozen(DEFAULTS))
  t.match(DEFAULTS, { sidecarUrl: 'http://127.0.0.1:9090', timeoutMs: 5000, onSidecarError: 'deny', verifyReceipts: 'local', maxBodyBytes: 10 * 1024 * 1024 })
  t.same(resolveGateOptions({}, {}), DEFAULTS)
})

t.test('sidecarUrl wins over GATE_SIDECAR_URL, which wins over the default', async t => {
  t.equal(resolveGateOptions({ sidecarUrl: 'http://a:1/' }, { GATE_SIDECAR_URL: 'http://b:2' }).sidecarUrl, 'http://a:1')
  t.equal(resolveGateOptions({}, { GATE_SIDECAR_URL: 'http://b:2' }).sidecarUrl, 'http://b:2')
  t.equal(resolveGateOptions({}, { GATE_SIDECAR_URL: '' }).sidecarUrl, 'http://127.0.0.1:9090')
  t.throws(() => resolveGateOptions({}, { GATE_SIDECAR_URL: 'ftp://x' }), { code: 'gate_invalid_config', message: /^GATE_SIDECAR_URL must be/ })
})

t.test('sidecarUrl unix:/absolute/path names a Unix socket, from the option or GATE_SIDECAR_URL', async t => {
  t.equal(resolveGateOptions({ sidecarUrl: 'unix:/run/gate/gate.sock' }, {}).sidecarUrl, 'unix:/run/gate/gate.sock')
  t.equal(resolveGateOptions({}, { GATE_SIDECAR_URL: 'unix:/run/gate.sock' }).sidecarUrl, 'unix:/run/gate.sock')
  const cases: [string, RegExp][] = [
    ['unix:gate.sock', /^sidecarUrl must be unix: followed by an absolute path/],
    ['unix:', /^sidecarUrl must be unix: followed by an absolute path/],
    [`unix:/${'x'.repeat(107)}`, /^sidecarUrl must be unix: followed by a path of at most 107 bytes/],
    ['unix:/a\0b', /^sidecarUrl must be unix: followed by a path without NUL bytes/],
  ]
  for (const [sidecarUrl, message] of cases) t.throws(() => createGateCore({ sidecarUrl }), { code: 'gate_invalid_config', message }, sidecarUrl)
})

t.test('bad options are refused at construction, naming the option', async t => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ timeoutMs: '5s' }, /^timeoutMs must be a positive integer, got "5s"$/],
    [{ timeoutMs: 0 }, /^timeoutMs must be a positive integer, got 0$/],
    [{ maxBodyBytes: 1.5 }, /^maxBodyBytes must be a positive integer/],
    [{ onSidecarError: 'open' }, /^onSidecarError must be one of "deny", "allow", got "open"$/],
    [{ verifyReceipts: true }, /^verifyReceipts must be one of/],
    [{ sidecarUrl: 'localhost:9090' }, /^sidecarUrl must be an http:\/\/ or https:\/\/ URL/],
    [{ sidecarUrl: 'http://u:p@h/' }, /^sidecarUrl must be .*without credentials/],
    [{ sidecarPublicKey: 'nothex' }, /^sidecarPublicKey must be a public key/],
    [{ forwardHeaders: ['Cookie'] }, /^forwardHeaders\[\] must be a lowercase header name/],
    [{ forwardHeaders: ['x-api-key'] }, /^forwardHeaders must be free of credential headers/],
    [{ identityCookie: 'a b' }, /^identityCookie must be a cookie name/],
    [{ identify: 'me' }, /^identify must be a function or null/],
    [{ skip: ['healthz'] }, /^skip\[\] must be a path starting with "\/" or a RegExp/],
    [{ connections: -1 }, /^connections must be a positive integer/],
    [{ sidecarToken: 'short' }, /^sidecarToken must be a token of at least 16 characters/],
    [{ timeout: 5000 }, /^unknown option "timeout"; known options: sidecarUrl, timeoutMs/],
  ]
  for (const [options, message] of cases) {
    t.throws(() => createGateCore(options as never), { code: 'gate_invalid_config', message }, JSON.stringify(options))
  }
})

t.test('the resolved options are frozen and carry every default', async t => {
  const resolved = resolveGateOptions({ timeoutMs: 100, skip: ['/healthz'] }, {})
  t.ok(Object.isFrozen(resolved))
  t.ok(Object.isFrozen(resolved.skip))
  t.equal(resolved.connections, DEFAULTS.connections)
})

t.test('sidecarToken wins over GATE_SIDECAR_TOKEN; null means none; both are held to the token rule', async t => {
  t.equal(resolveGateOptions({ sidecarToken: 'from-the-option-0123' }, { GATE_SIDECAR_TOKEN: 'from-the-environment-0123' }).sidecarToken, 'from-the-option-0123')
  t.equal(resolveGateOptions({}, { GATE_SIDECAR_TOKEN: 'from-the-environment-0123' }).sidecarToken, 'from-the-environment-0123')
  t.equal(resolveGateOptions({ sidecarToken: null }, { GATE_SIDECAR_TOKEN: 'from-the-environment-0123' }).sidecarToken, null, 'null turns the environment off')
  t.equal(resolveGateOptions({}, {}).sidecarToken, null)
  t.throws(() => resolveGateOptions({}, { GATE_SIDECAR_TOKEN: 'short' }), { code: 'gate_invalid_config', message: /^GATE_SIDECAR_TOKEN must be/ })
})
