// OpenTelemetry traces for Gate's services (docs/observability.md, "Traces"): off unless an OTLP
// endpoint is configured by the standard variables, then one NodeTracerProvider exporting OTLP/HTTP
// JSON in batches. When off nothing is loaded: the request path sees `tracer === undefined` and no
// OTel code runs.
import type { Tracer } from '@opentelemetry/api'

export interface GateTracing {
  readonly tracer: Tracer
  /** Where spans go (the traces URL), for the startup line. */
  readonly endpoint: string
  readonly serviceName: string
  /** Exports what is buffered, then stops; never rejects. */
  shutdown(): Promise<void>
}

type Env = Readonly<Record<string, string | undefined>>

/** The traces URL the OTLP exporter will use, or undefined when tracing is off (the OTel spec's rules). */
export function tracesEndpoint(env: Env): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined
  if (env.OTEL_TRACES_EXPORTER !== undefined && env.OTEL_TRACES_EXPORTER.trim().toLowerCase() === 'none') return undefined
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  if (traces) return traces
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  if (!base) return undefined
  return `${base.replace(/\/+$/, '')}/v1/traces`
}

/**
 * Starts tracing when the environment asks for it, else resolves undefined. `serviceName` is the
 * default `service.name`; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it, and the SDK
 * itself reads OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_* and OTEL_EXPORTER_OTLP_* (headers, timeout).
 */
export async function startTracing(serviceName: string, version: string, env: Env = process.env): Promise<GateTracing | undefined> {
  const endpoint = tracesEndpoint(env)
  if (endpoint === undefined) return undefined
  // loaded only when on: a service without tracing never pays for the SDK's modules
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ])
  const detected = resources.detectResources({ detectors: [resources.envDetector] })
  const name = env.OTEL_SERVICE_NAME?.trim() || serviceName
  // the service's own name and version first; OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME, override
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName, 'service.version': version }))
    .merge(detected)
    .merge(resources.resourceFromAttributes({ 'service.name': name }))
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }))] })
  // the global provider, propagator (W3C trace context and baggage) and AsyncLocalStorage context:
  // an application's own instrumentation in the same process joins the same traces
  provider.register()
  return {
    tracer: provider.getTracer('gate', version),
    endpoint,
    serviceName: name,
    shutdown: () => provider.shutdown().catch(() => undefined),
  }
}
