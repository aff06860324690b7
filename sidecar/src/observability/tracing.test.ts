// When tracing is on: only an OTLP endpoint turns it on, the traces endpoint wins, and the standard
// switches turn it off whatever else is set.
import t from 'tap'
import { startTracing, tracesEndpoint } from './tracing.js'

t.test('the OTLP endpoint alone turns tracing on, at its /v1/traces', async t => {
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), 'http://collector:4318/v1/traces')
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }), 'http://collector:4318/v1/traces')
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces' }), 'http://b:4318/traces', 'the traces endpoint is used as given')
})

t.test('no endpoint, an empty one, OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none leave tracing off', async t => {
  t.equal(tracesEndpoint({}), undefined)
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }), undefined)
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'TRUE' }), undefined)
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_EXPORTER: 'none' }), undefined)
  t.equal(await startTracing('gate sidecar', '0.0.0', { OTEL_SERVICE_NAME: 'x' }), undefined, 'a service name alone starts nothing')
})
