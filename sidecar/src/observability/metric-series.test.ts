// The series metrics scrape exactly as prom-client's own counters and histograms do for the same
// observations (names, label order, bucket bounds, +Inf, _sum, _count).
import t from 'tap'
import { Counter, Histogram, Registry } from 'prom-client'
import { SeriesCounter, SeriesHistogram } from './metric-series.js'

const BUCKETS = [0.001, 0.01, 0.1, 1]
const OBSERVED: [string, string, number][] = [
  ['/pets', 'GET', 0.0005],
  ['/pets', 'GET', 0.001],
  ['/pets', 'POST', 0.05],
  ['/pets/{id}', 'GET', 2],
  ['/pets', 'GET', 0.3],
]

t.test('a series histogram scrapes as a prom-client histogram of the same observations', async t => {
  const ours = new Registry()
  const theirs = new Registry()
  const series = new SeriesHistogram({ name: 'h_seconds', help: 'help', labelNames: ['route', 'method'], buckets: BUCKETS }, ours)
  const reference = new Histogram({ name: 'h_seconds', help: 'help', labelNames: ['route', 'method'], buckets: BUCKETS, registers: [theirs] })
  for (const [route, method, v] of OBSERVED) {
    series.series(route, method).observe(v)
    reference.observe({ route, method }, v)
  }
  t.equal(await ours.metrics(), await theirs.metrics())
})

t.test('a histogram without labels shows its zeros before the first observation, as prom-client does', async t => {
  const ours = new Registry()
  const theirs = new Registry()
  new SeriesHistogram({ name: 'batch', help: 'help', labelNames: [], buckets: [1, 2, 4] }, ours)
  new Histogram({ name: 'batch', help: 'help', buckets: [1, 2, 4], registers: [theirs] })
  t.equal(await ours.metrics(), await theirs.metrics())
})

t.test('a series counter scrapes as a prom-client counter; a label value is found again, not added twice', async t => {
  const ours = new Registry()
  const theirs = new Registry()
  const series = new SeriesCounter('c_total', 'help', ['verdict', 'status'], ours)
  const reference = new Counter({ name: 'c_total', help: 'help', labelNames: ['verdict', 'status'], registers: [theirs] })
  for (const [verdict, status] of [['allow', 200], ['deny', 403], ['allow', 200]] as const) {
    series.series(verdict, status).inc()
    reference.inc({ verdict, status: String(status) })
  }
  t.equal(series.series('allow', 200), series.series('allow', 200))
  t.equal(await ours.metrics(), await theirs.metrics())
})
