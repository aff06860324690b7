import { readFile } from 'node:fs/promises'
import t from 'tap'
import { renderCheckTable, replaceCheckTable, TABLE_END, TABLE_START } from './readme-table.js'
import { CHECKS } from './run-conformance.js'

t.test('README lists every check with its description and spec reference (in sync with CHECKS)', async t => {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8')
  t.equal(replaceCheckTable(readme, CHECKS), readme, 'README is out of date: run `node conformance/dist/update-readme.js`')
  for (const c of CHECKS) t.ok(readme.includes(`| \`${c.id}\` |`), `README has a row for ${c.id}`)
})

t.test('the table escapes pipes and names what a check needs', async t => {
  const table = renderCheckTable([{ id: 'a.b', description: 'x | y', specRef: '01 | 02', required: false, needs: ['control-token'] }])
  t.ok(table.startsWith(TABLE_START) && table.endsWith(TABLE_END))
  t.match(table, '| `a.b` | advisory | x \\| y (needs control-token) | 01 \\| 02 |')
})

t.test('check ids are unique and well-formed', async t => {
  const ids = CHECKS.map(c => c.id)
  t.equal(new Set(ids).size, ids.length, 'no duplicate ids')
  for (const id of ids) t.match(id, /^[a-z]+\.[a-z0-9-]+$/, `${id} is area.behaviour`)
  for (const c of CHECKS) t.ok(c.description.length > 0 && c.specRef.length > 0, `${c.id} has a description and a spec reference`)
})
