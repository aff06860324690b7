import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { classify, concretePath, loadPolicyDocument, patternMatches, routesFromDocument, unmatchedPath } from './policy.js'

t.test('classification follows spec 01: approval, then side effects, then the method', async t => {
  t.equal(classify('GET', false, undefined), 'SessionAllow')
  t.equal(classify('HEAD', false, undefined), 'SessionAllow')
  t.equal(classify('OPTIONS', false, undefined), 'SessionAllow')
  for (const m of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) t.equal(classify(m, false, undefined), 'DenyByDefault', m)
  t.equal(classify('POST', false, false), 'SessionAllow', 'x-gate-side-effects false allows a POST')
  t.equal(classify('GET', false, true), 'DenyByDefault', 'x-gate-side-effects true denies a GET')
  t.equal(classify('GET', true, false), 'DenyByDefault', 'approval wins over side effects false')
})

t.test('the built-in document has a route for every rule', async t => {
  const doc = await loadPolicyDocument(undefined)
  t.equal(doc.isDefault, true)
  const find = (m: string, p: string) => doc.routes.find(r => r.method === m && r.pattern === p)
  t.equal(find('GET', '/pets')?.decision, 'SessionAllow')
  t.equal(find('POST', '/pets')?.decision, 'DenyByDefault')
  t.equal(find('POST', '/pets/search')?.decision, 'SessionAllow')
  t.equal(find('GET', '/admin/export')?.decision, 'DenyByDefault')
  t.equal(find('POST', '/pets/{id}/adopt')?.approvalRequired, true)
  t.same([find('GET', '/pets/{id}/records')?.decision, find('GET', '/pets/{id}/records')?.sideEffects], ['DenyByDefault', false])
})

t.test('x-gate keys of the wrong JSON type count as absent', async t => {
  const routes = routesFromDocument({ openapi: '3.1.0', paths: { '/a': { get: { 'x-gate-side-effects': 'true', 'x-gate-approval-required': 1 } } } }, 'test')
  t.same(routes.map(r => [r.decision, r.sideEffects, r.approvalRequired]), [['SessionAllow', undefined, false]])
})

t.test('a document that is not OpenAPI 3 is a usage error', async t => {
  t.throws(() => routesFromDocument({ swagger: '2.0', paths: {} }, 'x'), { code: 'gate_invalid_config' })
  t.throws(() => routesFromDocument({ openapi: '3.0.0' }, 'x'), { code: 'gate_invalid_config' })
  const dir = t.testdir()
  await writeFile(join(dir, 'bad.json'), '{"openapi":')
  await t.rejects(loadPolicyDocument(join(dir, 'bad.json')), { code: 'gate_invalid_config' })
})

t.test('YAML documents load through the yaml package when it is installed', async t => {
  const path = join(t.testdir(), 'spec.yaml')
  await writeFile(path, 'openapi: 3.0.3\ninfo: {title: t, version: "1"}\npaths:\n  /x/{id}:\n    delete: {responses: {}}\n')
  const doc = await loadPolicyDocument(path)
  t.same(doc.routes.map(r => `${r.method} ${r.pattern} ${r.decision}`), ['DELETE /x/{id} DenyByDefault'])
})

t.test('paths: {param} is one segment, concrete paths fill it, unmatched paths match nothing', async t => {
  t.equal(patternMatches('/pets/{id}', '/pets/1'), true)
  t.equal(patternMatches('/pets/{id}', '/pets/1/2'), false)
  t.equal(patternMatches('/pets/{id}', '/pets/'), false)
  t.equal(concretePath('/a/{x}/b/{y}'), '/a/conformance-1/b/conformance-1')
  const routes = routesFromDocument({ openapi: '3.1.0', paths: { '/{a}/{b}': { get: {} } } }, 'test')
  const p = unmatchedPath(routes, 'z')
  t.equal(p, '/gate-conformance-unmatched-z', 'the two-segment candidate matches /{a}/{b}, the one-segment one does not')
})
