// An OTLP/HTTP trace receiver for tests: node:http on 127.0.0.1:0 accepting the JSON encoding at
// /v1/traces (what @opentelemetry/exporter-trace-otlp-http sends), flattening every export into spans
// and resolving waiters when the spans they ask for have arrived (never a sleep). Test support only.
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One received span, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  kind: number
  /** The exporting service's `service.name`. */
  service: string
  attributes: Record<string, unknown>
  events: { name: string; attributes: Record<string, unknown> }[]
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number
  startTimeUnixNano: bigint
  endTimeUnixNano: bigint
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  readonly spans: readonly ReceivedSpan[]
  /** Resolves with the received spans once `done(spans)` holds for them. */
  waitFor(done: (spans: readonly ReceivedSpan[]) => boolean): Promise<readonly ReceivedSpan[]>
  close(): Promise<void>
}

interface OtlpValue {
  stringValue?: string
  intValue?: string | number
  boolValue?: boolean
  doubleValue?: number
  arrayValue?: { values?: OtlpValue[] }
}
interface OtlpKeyValue {
  key: string
  value: OtlpValue
}
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  startTimeUnixNano: string | number
  endTimeUnixNano: string | number
  attributes?: OtlpKeyValue[]
  events?: { name: string; attributes?: OtlpKeyValue[] }[]
  status?: { code?: number }
}
interface OtlpExport {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[]
}

/**
 * Whether `then` started after `first` ended, within the SDK's clock resolution: each span's times are
 * anchored on Date.now() (milliseconds) when it starts, so two spans a few microseconds apart can
 * show either order. An order that is wrong by more than that is a real one.
 */
export function endsBefore(first: ReceivedSpan, then: Pick<ReceivedSpan, 'startTimeUnixNano'>): boolean {
  return first.endTimeUnixNano <= then.startTimeUnixNano + CLOCK_SLACK_NS
}

/** Whether `inner` ended no later than `outer`, within the same resolution. */
export function endsWithin(inner: ReceivedSpan, outer: ReceivedSpan): boolean {
  return inner.endTimeUnixNano <= outer.endTimeUnixNano + CLOCK_SLACK_NS
}

const CLOCK_SLACK_NS = 1_000_000n

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const waiters = new Set<{ done: (spans: readonly ReceivedSpan[]) => boolean; resolve: (spans: readonly ReceivedSpan[]) => void }>()
  const server = createServer((req, res) => void receive(req, res))

  async function receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
      res.writeHead(415).end()
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport
    for (const rs of body.resourceSpans ?? []) {
      const service = String(flatten(rs.resource?.attributes)['service.name'] ?? '')
      for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push(toSpan(s, service))
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    for (const w of waiters) {
      if (w.done(spans)) {
        waiters.delete(w)
        w.resolve([...spans])
      }
    }
  }

  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    waitFor(done) {
      if (done(spans)) return Promise.resolve([...spans])
      return new Promise(resolve => waiters.add({ done, resolve }))
    },
    async close() {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

function toSpan(s: OtlpSpan, service: string): ReceivedSpan {
  return {
    // the JSON encoding carries ids as hex (OTLP/JSON differs from protobuf JSON here)
    traceId: s.traceId.toLowerCase(),
    spanId: s.spanId.toLowerCase(),
    parentSpanId: (s.parentSpanId ?? '').toLowerCase(),
    name: s.name,
    kind: s.kind,
    service,
    attributes: flatten(s.attributes),
    events: (s.events ?? []).map(e => ({ name: e.name, attributes: flatten(e.attributes) })),
    statusCode: s.status?.code ?? 0,
    startTimeUnixNano: BigInt(s.startTimeUnixNano),
    endTimeUnixNano: BigInt(s.endTimeUnixNano),
  }
}

function flatten(attributes: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const a of attributes ?? []) out[a.key] = plainValue(a.value)
  return out
}

function plainValue(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue
  if (v.intValue !== undefined) return Number(v.intValue)
  if (v.boolValue !== undefined) return v.boolValue
  if (v.doubleValue !== undefined) return v.doubleValue
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(plainValue)
  return undefined
}
