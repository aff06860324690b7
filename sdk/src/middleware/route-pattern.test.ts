// Route patterns: framework syntax to OpenAPI, and the receipt's pattern checked against the path.
import t from 'tap'
import { patternMatchesPath, toOpenApiPattern } from './route-pattern.js'

t.test('framework patterns become OpenAPI patterns', async t => {
  t.equal(toOpenApiPattern('/pets/:id'), '/pets/{id}')
  t.equal(toOpenApiPattern('/a/:x/b/:y_z'), '/a/{x}/b/{y_z}')
  t.equal(toOpenApiPattern('/pets/{id}'), '/pets/{id}')
})

t.test('a pattern matches a path segment by segment', async t => {
  t.ok(patternMatchesPath('/pets/{id}', '/pets/7'))
  t.ok(patternMatchesPath('/pets/{id}/adopt', '/pets/7/adopt'))
  t.ok(patternMatchesPath('/files/{name}.json', '/files/a.json'))
  t.ok(patternMatchesPath('/unmatched/raw/path', '/unmatched/raw/path'), 'an unmatched request records its raw path')
  t.ok(patternMatchesPath('/caf\u00e9', '/caf%C3%A9'))
  t.notOk(patternMatchesPath('/pets/{id}', '/pets/7/adopt'))
  t.notOk(patternMatchesPath('/pets/{id}', '/owners/7'))
  t.notOk(patternMatchesPath('/pets', '/admin/export'))
})

t.test('one trailing slash is ignored on either side, as the sidecar routes it', async t => {
  t.ok(patternMatchesPath('/pets', '/pets/'), 'GET /pets/ is evaluated as /pets')
  t.ok(patternMatchesPath('/pets/{id}', '/pets/7/'))
  t.ok(patternMatchesPath('/pets/', '/pets'), 'a pattern written with the slash matches the path without it')
  t.notOk(patternMatchesPath('/pets', '/pets//'), 'only one')
  t.notOk(patternMatchesPath('/pets/{id}', '/pets/'), 'a parameter still needs its segment')
  t.ok(patternMatchesPath('/', '/'))
  t.notOk(patternMatchesPath('/', '/pets'))
})

t.test("the readings the sidecar decides by: letter case, ; parameters, an encoded slash", async t => {
  t.ok(patternMatchesPath('/admin/export', '/ADMIN/Export'))
  t.ok(patternMatchesPath('/files/{name}.json', '/FILES/a.JSON'))
  t.ok(patternMatchesPath('/admin/export', '/admin;x=1/export;jsessionid=2'))
  t.ok(patternMatchesPath('/pets/{id}/records', '/pets/x%2Frecords'))
  t.notOk(patternMatchesPath('/pets/{id}/records', '/pets/x%2Fother'))
  t.notOk(patternMatchesPath('/admin/export', '/admin/import;x'))
})
