// examples/grafana/gate-dashboard.json queries only metrics Gate exports: every `gate_*` name in its
// expressions (histogram suffixes removed) is registered in this folder's sources and documented in
// docs/observability.md, and every panel reads the dashboard's data source variable.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const SRC = fileURLToPath(new URL('../../src/observability/', import.meta.url))

interface Panel {
  type: string
  title: string
  datasource?: { uid?: string }
  targets?: { expr: string }[]
}

const dashboard = JSON.parse(readFileSync(`${ROOT}examples/grafana/gate-dashboard.json`, 'utf8')) as { panels: Panel[] }
const sources = readdirSync(SRC)
  .filter(f => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map(f => readFileSync(SRC + f, 'utf8'))
  .join('\n')
/** Grafana's variable reference, written as Grafana reads it (not a template literal). */
const DATASOURCE_VARIABLE = ['$', '{datasource}'].join('')
const docs = readFileSync(`${ROOT}docs/observability.md`, 'utf8')

t.test('every gate_* metric the dashboard queries is exported and documented', async t => {
  const names = new Set<string>()
  for (const panel of dashboard.panels) for (const target of panel.targets ?? []) for (const m of target.expr.matchAll(/\bgate_[a-z_]+/g)) names.add(m[0].replace(/_(bucket|sum|count)$/, ''))
  t.ok(names.size >= 15, `${names.size} metrics queried`)
  for (const name of names) {
    t.ok(sources.includes(`'${name}'`), `${name} is registered in sidecar/src/observability`)
    t.ok(docs.includes(`\`${name}\``), `${name} is documented`)
  }
})

t.test('every query panel reads the data source variable', async t => {
  for (const panel of dashboard.panels.filter(p => p.type !== 'row')) t.equal(panel.datasource?.uid, DATASOURCE_VARIABLE, panel.title)
})
