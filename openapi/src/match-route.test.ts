import t from 'tap'
import { createRouteTable, matchRoute } from './match-route.js'
import { routeTableFromSpec } from './route-table.js'
import type { RouteEntry } from './types.js'

const route = (method: RouteEntry['method'], pattern: string, decision: RouteEntry['decision'] = 'DenyByDefault'): RouteEntry => ({
  method,
  pattern,
  decision,
  why: 'side_effects',
  sensitivity: 'internal',
  approvalRequired: false,
  published: true,
  toolName: `${method} ${pattern}`,
})

const table = createRouteTable([
  route('GET', '/pets/{id}'),
  route('GET', '/pets/mine'),
  route('GET', '/pets/{id}/toys/{toyId}'),
  route('GET', '/{a}/b/c'),
  route('GET', '/x/{b}/{c}'),
  route('GET', '/files/{name}.json'),
  route('GET', '/files/{name}'),
  route('GET', '/'),
  route('GET', '/admin'),
  route('POST', '/pets'),
])

const patternOf = (method: string, path: string) => {
  const m = matchRoute(table, method, path)
  return m.matched ? m.pattern : null
}

t.test('a concrete segment beats a template', async t => {
  t.equal(patternOf('GET', '/pets/mine'), '/pets/mine')
  t.equal(patternOf('GET', '/pets/42'), '/pets/{id}')
})

t.test('literals win at the first position where patterns differ, left to right', async t => {
  t.equal(patternOf('GET', '/x/b/c'), '/x/{b}/{c}')
  t.equal(patternOf('GET', '/y/b/c'), '/{a}/b/c')
})

t.test('a {param} matches exactly one non-empty segment', async t => {
  t.equal(patternOf('GET', '/pets/1/toys/2'), '/pets/{id}/toys/{toyId}')
  t.equal(patternOf('GET', '/pets/1/2'), null, 'no pattern spans two segments')
  t.equal(patternOf('GET', '/pets/1/toys'), null)
  t.equal(patternOf('GET', '/pets'), null)
})

t.test('parameters are returned percent-decoded by name; an encoded slash stays inside its segment', async t => {
  const m = matchRoute(table, 'GET', '/pets/group%2Fname/toys/a%20b')
  t.ok(m.matched)
  if (m.matched) t.same({ ...m.params }, { id: 'group/name', toyId: 'a b' })
})

t.test('a template inside a segment beats a whole-segment template and captures its part', async t => {
  const m = matchRoute(table, 'GET', '/files/report.json')
  t.equal(m.pattern, '/files/{name}.json')
  if (m.matched) t.same({ ...m.params }, { name: 'report' })
  t.equal(patternOf('GET', '/files/report.csv'), '/files/{name}')
})

t.test('an unmatched path falls back to the method rule and records the raw path', async t => {
  t.same(matchRoute(table, 'GET', '/nowhere/at/all?x=1'), { matched: false, pattern: '/nowhere/at/all', decision: 'SessionAllow', why: 'method' })
  t.same(matchRoute(table, 'DELETE', '/pets/1'), { matched: false, pattern: '/pets/1', decision: 'DenyByDefault', why: 'method' }, 'path known, method not')
  t.same(matchRoute(table, 'HEAD', '/nowhere'), { matched: false, pattern: '/nowhere', decision: 'SessionAllow', why: 'method' })
  t.same(matchRoute(table, 'TRACE', '/admin'), { matched: false, pattern: '/admin', decision: 'DenyByDefault', why: 'method' })
  t.same(matchRoute(table, 'GET', '*'), { matched: false, pattern: '*', decision: 'SessionAllow', why: 'method' })
})

t.test('denyUnmatched: an unmatched path is DenyByDefault whatever the method; matched routes keep theirs', async t => {
  const strict = createRouteTable([route('GET', '/pets/{id}', 'SessionAllow'), route('POST', '/pets')], { denyUnmatched: true })
  t.ok(strict.denyUnmatched)
  for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST']) {
    t.same(matchRoute(strict, method, '/secret?x=1'), { matched: false, pattern: '/secret', decision: 'DenyByDefault', why: 'unmatched' }, `${method} /secret`)
  }
  t.match(matchRoute(strict, 'GET', '/pets/7'), { matched: true, decision: 'SessionAllow' })
  t.match(matchRoute(strict, 'HEAD', '/pets/7'), { matched: true, decision: 'SessionAllow' }, 'HEAD is still decided as GET')
  t.match(matchRoute(strict, 'GET', '/pets/./7'), { decision: 'DenyByDefault', why: 'ambiguous_path' }, 'an ambiguous path stays ambiguous')
  t.notOk(createRouteTable([]).denyUnmatched, 'off by default')
})

t.test('a matched route carries its own decision and why', async t => {
  const m = matchRoute(table, 'POST', '/pets')
  t.same([m.matched, m.decision, m.why, m.pattern], [true, 'DenyByDefault', 'side_effects', '/pets'])
})

t.test('the query string and fragment are ignored; one trailing slash is ignored', async t => {
  t.equal(patternOf('GET', '/admin?a=b#c'), '/admin')
  t.equal(patternOf('GET', '/admin/'), '/admin')
  t.equal(patternOf('GET', '/'), '/')
  t.equal(patternOf('GET', '/?q=1'), '/')
})

t.test('ambiguous paths match nothing and are DenyByDefault whatever the method', async t => {
  for (const path of ['/pets//x', '//admin', '/admin//', '/pets/%2e%2e/admin', '/pets/../admin', '/pets/./1', '/pets/%2E', '/pets/a\\b', '/pets/a%5Cb', '/pets/%zz']) {
    t.same(matchRoute(table, 'GET', path), { matched: false, pattern: path, decision: 'DenyByDefault', why: 'ambiguous_path' }, path)
  }
})

t.test('letter case is ignored by default; parameters keep theirs', async t => {
  t.equal(patternOf('GET', '/ADMIN'), '/admin')
  t.equal(patternOf('GET', '/Pets/Mine'), '/pets/mine')
  const m = matchRoute(table, 'GET', '/PETS/Rex/TOYS/Ball')
  t.equal(m.pattern, '/pets/{id}/toys/{toyId}')
  if (m.matched) t.same({ ...m.params }, { id: 'Rex', toyId: 'Ball' })
  const mixed = matchRoute(table, 'GET', '/files/Report.JSON')
  t.equal(mixed.pattern, '/files/{name}.json')
  if (mixed.matched) t.same({ ...mixed.params }, { name: 'Report' })
})

// A document where a safe method has side effects: the route an attacker would reach by HEAD, letter
// case, `;` parameters or an encoded slash, with a looser method rule or route beside it.
const guarded = [
  route('GET', '/report'),
  route('GET', '/pets/{id}', 'SessionAllow'),
  { ...route('GET', '/pets/{id}/records'), approvalRequired: true, why: 'approval' as const },
  route('GET', '/Open', 'SessionAllow'),
  route('GET', '/open', 'DenyByDefault'),
]

t.test('HEAD is decided as GET of the same route, or by its own operation when stricter', async t => {
  const tbl = createRouteTable([...guarded, route('HEAD', '/pets/{id}', 'DenyByDefault')])
  t.match(matchRoute(tbl, 'HEAD', '/report'), { matched: true, pattern: '/report', decision: 'DenyByDefault' }, 'not the method rule')
  t.match(matchRoute(tbl, 'HEAD', '/pets/1/records'), { matched: true, pattern: '/pets/{id}/records', decision: 'DenyByDefault', why: 'approval' })
  t.match(matchRoute(tbl, 'HEAD', '/pets/1'), { matched: true, decision: 'DenyByDefault', route: { method: 'HEAD' } }, 'the stricter HEAD operation')
  t.match(matchRoute(createRouteTable(guarded), 'HEAD', '/pets/1'), { matched: true, decision: 'SessionAllow', route: { method: 'GET' } })
  t.match(matchRoute(tbl, 'HEAD', '/elsewhere'), { matched: false, decision: 'SessionAllow', why: 'method' })
})

t.test('case-insensitive: patterns equal but for case go to the stricter route', async t => {
  t.match(matchRoute(createRouteTable(guarded), 'GET', '/OPEN'), { pattern: '/open', decision: 'DenyByDefault' })
  t.match(matchRoute(createRouteTable(guarded), 'GET', '/REPORT'), { pattern: '/report', decision: 'DenyByDefault' })
})

t.test('case-sensitive: exact literals match, and a path one case-fold from a stricter route is decided by it', async t => {
  const tbl = createRouteTable(guarded, { caseSensitive: true })
  t.match(matchRoute(tbl, 'GET', '/Open'), { pattern: '/Open', decision: 'SessionAllow' }, 'the exact route')
  t.match(matchRoute(tbl, 'GET', '/REPORT'), { matched: true, pattern: '/report', decision: 'DenyByDefault' }, 'not the method rule')
  t.match(matchRoute(tbl, 'HEAD', '/Report'), { matched: true, pattern: '/report', decision: 'DenyByDefault' })
  t.match(matchRoute(tbl, 'GET', '/PETS/1/RECORDS'), { pattern: '/pets/{id}/records', decision: 'DenyByDefault', why: 'approval' })
  t.match(matchRoute(tbl, 'GET', '/unrelated/PATH'), { matched: false, decision: 'SessionAllow', why: 'method' })
})

t.test('; path parameters and an encoded slash never loosen the decision', async t => {
  const tbl = createRouteTable([...guarded, route('POST', '/pets/search', 'SessionAllow')])
  t.match(matchRoute(tbl, 'POST', '/pets/search;x=1'), { matched: false, decision: 'DenyByDefault', why: 'method' }, 'a looser route a reading reaches does not count')
  t.match(matchRoute(createRouteTable([route('POST', '/pets/search', 'SessionAllow')], { caseSensitive: true }), 'POST', '/PETS/SEARCH'), { matched: false, decision: 'DenyByDefault' }, 'nor a looser case-folded one')
  t.match(matchRoute(tbl, 'GET', '/report;jsessionid=x'), { pattern: '/report', decision: 'DenyByDefault' })
  t.match(matchRoute(tbl, 'GET', '/pets/1;v=2/records'), { pattern: '/pets/{id}/records', decision: 'DenyByDefault' })
  // `%2F` stays inside its segment (GET /pets/{id}, a session allow), but a server that decodes it first
  // routes to /pets/x/records: that stricter route decides
  t.match(matchRoute(tbl, 'GET', '/pets/x%2Frecords'), { pattern: '/pets/{id}/records', decision: 'DenyByDefault' })
  const plain = matchRoute(tbl, 'GET', '/pets/group%2Fname')
  t.match(plain, { pattern: '/pets/{id}', decision: 'SessionAllow' }, 'no stricter reading: the route as matched')
  if (plain.matched) t.same({ ...plain.params }, { id: 'group/name' })
})

t.test('ties between identical templates go to the stricter route, then the agreeing trailing slash, then the smaller pattern', async t => {
  const tied = createRouteTable([route('GET', '/a/{y}'), route('GET', '/a/{x}'), route('GET', '/b/'), route('GET', '/b')])
  t.equal(matchRoute(tied, 'GET', '/a/1').pattern, '/a/{x}')
  t.equal(matchRoute(tied, 'GET', '/b').pattern, '/b')
  t.equal(matchRoute(tied, 'GET', '/b/').pattern, '/b/')
  // an upstream that ignores the trailing slash may route either way: the stricter route decides
  const mixed = createRouteTable([route('GET', '/c/', 'SessionAllow'), route('GET', '/c'), route('GET', '/d', 'SessionAllow'), route('GET', '/d/')])
  t.match(matchRoute(mixed, 'GET', '/c/'), { pattern: '/c', decision: 'DenyByDefault' })
  t.match(matchRoute(mixed, 'GET', '/d'), { pattern: '/d/', decision: 'DenyByDefault' })
})

// GET /admin/export is deny-by-default beside looser routes and the method rule
const exportTable = createRouteTable([route('GET', '/admin/export'), route('GET', '/admin/{page}', 'SessionAllow'), route('GET', '/pets/{id}', 'SessionAllow'), route('GET', '/{a}/admin', 'DenyByDefault')])

t.test('an encoded slash and a trailing slash combine: every variant reaches the stricter route', async t => {
  for (const path of ['/admin/export%2F', '/admin%2Fexport%2F', '/admin%2Fexport', '/admin/export/', '/admin%2fexport%2f', '/ADMIN%2FEXPORT%2F']) {
    t.match(matchRoute(exportTable, 'GET', path), { matched: true, pattern: '/admin/export', decision: 'DenyByDefault' }, path)
  }
})

t.test('readings with an empty or dot segment are ambiguous: DenyByDefault unless a stricter route decides', async t => {
  for (const path of ['/admin%2F%2Fexport', '/%2Fadmin/export', '/pets/x%2F..%2F..%2Fadmin%2Fexport', '/pets/..;/admin', '/pets/.;x', '/admin/export%2F/', '/admin/;x/export']) {
    t.same(matchRoute(exportTable, 'GET', path), { matched: false, pattern: path, decision: 'DenyByDefault', why: 'ambiguous_path' }, path)
  }
  t.match(matchRoute(createRouteTable([{ ...route('GET', '/admin/{x}'), approvalRequired: true, why: 'approval' as const }]), 'GET', '/admin/a%2F%2Fb'), { pattern: '/admin/{x}', why: 'approval' }, 'an approval route as sent stays')
})

t.test('; parameters are cut before and after decoding an encoded slash', async t => {
  // decode then keep `;`: /x;y/admin reaches /{a}/admin; cut first: /x
  t.match(matchRoute(exportTable, 'GET', '/x;y%2Fadmin'), { pattern: '/{a}/admin', decision: 'DenyByDefault' })
  // cut then decode: /admin/export
  t.match(matchRoute(exportTable, 'GET', '/admin/export;a%2Fb'), { pattern: '/admin/export', decision: 'DenyByDefault' })
})

t.test('a format suffix cut off the last segment reaches the stricter route', async t => {
  for (const path of ['/admin/export.json', '/admin/export.tar.gz', '/Admin/Export.JSON', '/admin/export.json/', '/admin%2Fexport.json', '/admin/export;v=1.json', '/admin/export.json;v=1', '/admin/export.json?x=1']) {
    t.match(matchRoute(exportTable, 'GET', path), { matched: true, pattern: '/admin/export', decision: 'DenyByDefault' }, path)
  }
  const dotted = createRouteTable([route('GET', '/files/export.v2'), route('GET', '/files/{name}', 'SessionAllow'), route('GET', '/data/{name}.json'), route('GET', '/data/{name}', 'SessionAllow')])
  t.match(matchRoute(dotted, 'GET', '/files/export.v2.json'), { pattern: '/files/export.v2', decision: 'DenyByDefault' }, 'a literal with a dot')
  t.match(matchRoute(dotted, 'GET', '/data/x.json.bak'), { pattern: '/data/{name}.json', decision: 'DenyByDefault' }, 'one extension off a template')
  t.match(matchRoute(createRouteTable([route('GET', '/files/export')], { caseSensitive: true }), 'GET', '/files/EXPORT.json'), { pattern: '/files/export', decision: 'DenyByDefault' }, 'case-sensitive table, case-folded stem')
})

t.test('a format suffix that reaches no stricter route leaves the decision as sent', async t => {
  t.match(matchRoute(exportTable, 'GET', '/admin/report.json'), { pattern: '/admin/{page}', decision: 'SessionAllow' })
  t.match(matchRoute(exportTable, 'GET', '/pets/42.json'), { pattern: '/pets/{id}', decision: 'SessionAllow' })
  t.match(matchRoute(exportTable, 'GET', '/static/app.js'), { matched: false, decision: 'SessionAllow', why: 'method' })
  t.match(matchRoute(exportTable, 'GET', '/admin/.json'), { pattern: '/admin/{page}', decision: 'SessionAllow' }, 'no stem before a leading dot')
})

t.test('a segment of many dots costs a bounded number of lookups', async t => {
  const m = matchRoute(exportTable, 'GET', `/admin/${'a.'.repeat(50_000)}json`)
  t.match(m, { pattern: '/admin/{page}', decision: 'SessionAllow' })
  t.same(exportTable.index.suffixStems(`${'a.'.repeat(50_000)}json`).length, 1, 'only the one-extension stem')
  t.same(exportTable.index.suffixStems('export.tar.gz'), ['export', 'export.tar'])
})

t.test('a route table from a document matches its own patterns', async t => {
  const fromSpec = routeTableFromSpec(
    JSON.stringify({ openapi: '3.0.0', info: {}, paths: { '/users/{u}': { get: { 'x-gate-side-effects': true } }, '/users/me': { get: {} } } }),
  )
  t.same([matchRoute(fromSpec, 'GET', '/users/me').decision, matchRoute(fromSpec, 'GET', '/users/bob').decision], ['SessionAllow', 'DenyByDefault'])
})

t.test('a very long request path is answered without deep recursion', async t => {
  const m = matchRoute(table, 'GET', `/${'a/'.repeat(100_000)}b`)
  t.equal(m.matched, false)
})
