// Counters and histograms for the metrics recorded on every request (metrics.ts), registered in the
// prom-client registry like its own and scraped in the same text format, but recorded without
// allocating: a series is found through one Map per label (created on its first use, then reused), and
// an observation adds to numbers it already holds. prom-client's own `observe({ … }, v)` builds a labels
// object, a closure, a key string and a result object per call.
import type { Registry } from 'prom-client'

/** What prom-client's Registry reads from a metric when it is scraped. */
interface ScrapedMetric {
  name: string
  help: string
  type: 'counter' | 'histogram'
  values: { metricName?: string; labels: Record<string, string | number>; value: number; sharedLabels?: Record<string, string> }[]
  aggregator: 'sum'
}

type LabelValue = string | number

interface SeriesTree<S> {
  children: Map<LabelValue, SeriesTree<S>>
  series?: S
}

/** One label combination of a histogram. */
export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last is the +Inf overflow. */
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor(
    readonly labels: Readonly<Record<string, LabelValue>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe(value: number): void {
    const bounds = this.bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    this.counts[i]!++
    this.sum += value
    this.count++
  }
}

/** One label combination of a counter. */
export class CounterSeries {
  value = 0

  constructor(readonly labels: Readonly<Record<string, LabelValue>>) {}

  inc(by = 1): void {
    this.value += by
  }
}

/** The series of one metric, by label values in `labelNames` order. */
const MAX_LABELS = 4

abstract class SeriesMetric<S> {
  readonly #root: SeriesTree<S> = { children: new Map() }
  protected readonly all: S[] = []

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    if (labelNames.length > MAX_LABELS) throw new RangeError(`${name}: at most ${MAX_LABELS} labels`)
    registry.registerMetric(this as never)
  }

  protected abstract create(labels: Record<string, LabelValue>): S

  /** The series of these label values, in `labelNames` order (at most four; no rest array to allocate); created on first use. */
  series(a?: LabelValue, b?: LabelValue, c?: LabelValue, d?: LabelValue): S {
    const n = this.labelNames.length
    let node = this.#root
    if (n > 0) node = child(node, a!)
    if (n > 1) node = child(node, b!)
    if (n > 2) node = child(node, c!)
    if (n > 3) node = child(node, d!)
    if (node.series === undefined) {
      const values = [a, b, c, d]
      const labels: Record<string, LabelValue> = {}
      this.labelNames.forEach((label, i) => (labels[label] = values[i]!))
      node.series = this.create(labels)
      this.all.push(node.series)
    }
    return node.series
  }

  /** Read at scrape time only (prom-client's Registry.metrics()). */
  abstract get(): Promise<ScrapedMetric>

  reset(): void {
    // the registry's resetMetrics(); Gate never calls it
  }
}

export class SeriesHistogram extends SeriesMetric<HistogramSeries> {
  readonly type = 'histogram'

  constructor(
    options: { name: string; help: string; labelNames: readonly string[]; buckets: readonly number[] },
    registry: Registry,
  ) {
    super(options.name, options.help, options.labelNames, registry)
    this.buckets = Object.freeze([...options.buckets])
    // as prom-client does, a histogram without labels shows its zeros before the first observation
    if (options.labelNames.length === 0) this.series()
  }

  readonly buckets: readonly number[]

  protected create(labels: Record<string, LabelValue>): HistogramSeries {
    return new HistogramSeries(labels, this.buckets)
  }

  /** The series without labels (a histogram declared with none). */
  get unlabelled(): HistogramSeries {
    return this.series()
  }

  async get(): Promise<ScrapedMetric> {
    const values: ScrapedMetric['values'] = []
    for (const s of this.all) {
      const shared = stringLabels(s.labels)
      let cumulative = 0
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i]!
        values.push({ metricName: `${this.name}_bucket`, labels: { le }, value: cumulative, sharedLabels: shared })
      })
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf' }, value: s.count, sharedLabels: shared })
      values.push({ metricName: `${this.name}_sum`, labels: {}, value: s.sum, sharedLabels: shared })
      values.push({ metricName: `${this.name}_count`, labels: {}, value: s.count, sharedLabels: shared })
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' }
  }
}

export class SeriesCounter extends SeriesMetric<CounterSeries> {
  readonly type = 'counter'

  protected create(labels: Record<string, LabelValue>): CounterSeries {
    return new CounterSeries(labels)
  }

  async get(): Promise<ScrapedMetric> {
    return { name: this.name, help: this.help, type: 'counter', values: this.all.map(s => ({ labels: stringLabels(s.labels), value: s.value })), aggregator: 'sum' }
  }
}

function child<S>(node: SeriesTree<S>, value: LabelValue): SeriesTree<S> {
  let next = node.children.get(value)
  if (next === undefined) node.children.set(value, (next = { children: new Map() }))
  return next
}

function stringLabels(labels: Readonly<Record<string, LabelValue>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(labels)) out[k] = String(v)
  return out
}
