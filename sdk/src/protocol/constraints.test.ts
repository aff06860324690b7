import t from 'tap'
import { checkConstraint, PORTABLE_CONSTRAINTS, REFUSED_CONSTRAINTS } from './constraints.js'

const decide = (type: string, value: unknown, args: Record<string, unknown> | undefined) => checkConstraint(value === undefined ? { type } : { type, value }, args)

t.test('27 variants: 8 decided from arguments, 19 refused by name', async t => {
  t.equal(PORTABLE_CONSTRAINTS.length, 8)
  t.equal(REFUSED_CONSTRAINTS.length, 19)
  t.equal(new Set([...PORTABLE_CONSTRAINTS, ...REFUSED_CONSTRAINTS]).size, 27)
  for (const type of REFUSED_CONSTRAINTS) {
    const outcome = decide(type, type === 'governed_intent_required' ? undefined : 1, { anything: 'x' })
    t.match(outcome, { ok: false, code: 'constraint_refused', reason: new RegExp(type) }, type)
  }
  t.match(decide('teleport', 1, {}), { ok: false, code: 'constraint_refused', reason: /unknown constraint teleport/ })
})

t.test('a malformed constraint or value is refused as malformed', async t => {
  for (const c of [null, 'path_prefix', [], { kind: 'path_prefix' }, { type: 'path_prefix', value: '/a', note: 'x' }]) {
    t.match(checkConstraint(c, {}), { ok: false, code: 'constraint_malformed' }, JSON.stringify(c))
  }
  const bad: [string, unknown][] = [
    ['path_prefix', ''],
    ['domain_exact', 3],
    ['max_length', -1],
    ['max_args_size', 1.5],
    ['custom', ['k']],
    ['custom', ['', 'v']],
    ['audience_allowlist', 'a@b.c'],
    ['memory_store_allowlist', [1]],
  ]
  for (const [type, value] of bad) t.match(decide(type, value, {}), { ok: false, code: 'constraint_malformed' }, `${type} ${JSON.stringify(value)}`)
})

t.test('no portable constraint is decided when Gate cannot see every argument', async t => {
  const values: Record<string, unknown> = { path_prefix: '/a', domain_exact: 'a.com', domain_glob: '*.a.com', max_length: 1, max_args_size: 1, custom: ['k', 'v'], audience_allowlist: ['x'], memory_store_allowlist: ['x'] }
  for (const type of PORTABLE_CONSTRAINTS) t.match(decide(type, values[type], undefined), { ok: false, code: 'arguments_unavailable' }, type)
})

t.test('path_prefix: every path argument lies under the prefix, segment-wise, after . and ..', async t => {
  const ok = [{ path: '/data/a.txt' }, { file: '/data' }, { body: { files: ['/data/x', '/data/y/z'] } }, { dir: '/data/./x' }]
  for (const args of ok) t.match(decide('path_prefix', '/data', args), { ok: true }, JSON.stringify(args))
  const no = [
    {},
    { name: 'rex' },
    { path: '/database' },
    { path: '/data/../etc/passwd' },
    { path: '/data/%2e%2e/etc' },
    { path: 'data/x' },
    { id: '..' },
    { path: '/data/x', other: '/etc/shadow' },
    { path: '/../data' },
  ]
  for (const args of no) t.match(decide('path_prefix', '/data', args), { ok: false, code: 'constraint_unsatisfied' }, JSON.stringify(args))
})

t.test('domain_exact and domain_glob: every host named in the arguments matches', async t => {
  t.match(decide('domain_exact', 'api.example.com', { url: 'https://API.example.com/x?y=1' }), { ok: true })
  t.match(decide('domain_exact', 'api.example.com', { host: 'api.example.com:8443' }), { ok: true })
  t.match(decide('domain_exact', 'api.example.com', { url: 'https://api.example.com@evil.com/' }), { ok: false }, 'userinfo does not name the host')
  t.match(decide('domain_exact', 'api.example.com', { url: 'https://api.example.com\\@evil.com/' }), { ok: true }, 'a backslash ends the authority, as a client reads it')
  t.match(decide('domain_exact', 'evil.com', { url: 'https://api.example.com\\@evil.com/' }), { ok: false })
  t.match(decide('domain_exact', 'api.example.com', { a: 'https://api.example.com', b: 'https://evil.com' }), { ok: false })
  t.match(decide('domain_exact', 'api.example.com', { name: 'rex' }), { ok: false, reason: /names no domain/ })
  t.match(decide('domain_exact', 'api.example.com', { url: 'https://[::1' }), { ok: false, reason: /does not parse/ })
  t.match(decide('domain_glob', '*.example.com', { url: 'https://a.b.example.com/' }), { ok: true })
  t.match(decide('domain_glob', '*.example.com', { url: 'https://example.com/' }), { ok: false })
  t.match(decide('domain_glob', '*.example.com', { url: 'https://example.com.evil.org/' }), { ok: false })
})

t.test('max_length, max_args_size: string values in UTF-8 bytes, arguments as canonical JSON', async t => {
  t.match(decide('max_length', 3, { a: 'abc', b: ['xyz'] }), { ok: true })
  t.match(decide('max_length', 3, { a: 'abcd' }), { ok: false, code: 'constraint_unsatisfied' })
  t.match(decide('max_length', 3, { a: 'ü' + 'ü' }), { ok: false }, 'four bytes')
  t.match(decide('max_args_size', 9, { a: 'b' }), { ok: true }, '{"a":"b"} is 9 bytes')
  t.match(decide('max_args_size', 8, { a: 'b' }), { ok: false })
})

t.test('custom: every argument of that name, at any depth, has exactly that value', async t => {
  t.match(decide('custom', ['tenant', 'acme'], { tenant: 'acme', body: { tenant: 'acme' } }), { ok: true })
  t.match(decide('custom', ['tenant', 'acme'], { tenant: 'acme', body: { tenant: 'other' } }), { ok: false })
  t.match(decide('custom', ['tenant', 'acme'], { body: {} }), { ok: false, reason: /no argument tenant/ })
  t.match(decide('custom', ['tenant', 'acme'], { tenant: ['acme'] }), { ok: false })
})

t.test('audience and memory-store allowlists: every one named is allowed, and one is named', async t => {
  t.match(decide('audience_allowlist', ['a@x.com', 'b@x.com'], { body: { to: ['a@x.com'], cc: 'b@x.com' } }), { ok: true })
  t.match(decide('audience_allowlist', ['a@x.com'], { body: { to: ['a@x.com', 'c@x.com'] } }), { ok: false })
  t.match(decide('audience_allowlist', ['a@x.com'], { body: { Recipients: [{ email: 'a@x.com' }] } }), { ok: false }, 'a non-string recipient cannot be compared')
  t.match(decide('audience_allowlist', ['a@x.com'], { body: { subject: 'hi' } }), { ok: false, reason: /names no audience/ })
  t.match(decide('memory_store_allowlist', ['notes'], { namespace: 'notes' }), { ok: true })
  t.match(decide('memory_store_allowlist', ['notes'], { store: 'secrets' }), { ok: false })
})
