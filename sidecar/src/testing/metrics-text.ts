// Reads the Prometheus text exposition a Gate service answers on /metrics, for end-to-end tests.
export interface MetricSample {
  name: string
  labels: Record<string, string>
  value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** Every sample line of `text` (comments skipped); throws on a line that is neither. */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = SAMPLE.exec(line)
    if (m === null) throw new Error(`not a Prometheus sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    samples.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return samples
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function metricValue(samples: readonly MetricSample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)
}
