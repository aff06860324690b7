// traceHeaders: the active span's context when the app runs OpenTelemetry, else the incoming request's
// own valid traceparent, else nothing. The app's SDK is stood in for by the smallest context manager
// and W3C propagator the API accepts (registered globally for this file only).
import t from 'tap'
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags, type Context, type ContextManager, type TextMapPropagator } from '@opentelemetry/api'
import { traceHeaders } from './trace-context.js'

const INCOMING = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

t.test('without an OpenTelemetry SDK the incoming traceparent and tracestate are passed on', async t => {
  t.same(traceHeaders({ traceparent: INCOMING, tracestate: 'congo=t61rcWkgMzE' }), { traceparent: INCOMING, tracestate: 'congo=t61rcWkgMzE' })
  t.same(traceHeaders({ traceparent: ` ${INCOMING} ` }), { traceparent: INCOMING }, 'trimmed')
})

t.test('a malformed or all-zero traceparent is not passed on, nor its tracestate', async t => {
  for (const bad of ['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331', '00-00000000000000000000000000000000-b7ad6b7169203331-01', '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01', '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01', 'x'.repeat(55)]) {
    t.equal(traceHeaders({ traceparent: bad, tracestate: 'a=b' }), undefined, bad)
  }
  t.equal(traceHeaders({ traceparent: [INCOMING, INCOMING] }), undefined, 'a repeated header is ambiguous')
  t.equal(traceHeaders({}), undefined)
})

t.test('with an active span its context wins over the incoming header', async t => {
  const manager = new StackContextManager()
  context.setGlobalContextManager(manager)
  propagation.setGlobalPropagator(new MiniW3CPropagator())
  t.teardown(() => {
    context.disable()
    propagation.disable()
  })
  const span = trace.wrapSpanContext({ traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceFlags: TraceFlags.SAMPLED })
  const headers = context.with(trace.setSpan(ROOT_CONTEXT, span), () => traceHeaders({ traceparent: INCOMING }))
  t.same(headers, { traceparent: `00-${'f'.repeat(32)}-${'e'.repeat(16)}-01` })
  t.same(traceHeaders({ traceparent: INCOMING }), { traceparent: INCOMING }, 'outside the span: the incoming one again')
})

/** Synchronous only: all this test needs of a context manager. */
class StackContextManager implements ContextManager {
  #stack: Context[] = [ROOT_CONTEXT]
  active(): Context {
    return this.#stack[this.#stack.length - 1] as Context
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    this.#stack.push(ctx)
    try {
      return fn.call(thisArg, ...args)
    } finally {
      this.#stack.pop()
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target
  }
  enable(): this {
    return this
  }
  disable(): this {
    this.#stack = [ROOT_CONTEXT]
    return this
  }
}

class MiniW3CPropagator implements TextMapPropagator {
  inject(ctx: Context, carrier: unknown): void {
    const sc = trace.getSpanContext(ctx)
    if (sc !== undefined) (carrier as Record<string, string>).traceparent = `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & 1}`
  }
  extract(ctx: Context): Context {
    return ctx
  }
  fields(): string[] {
    return ['traceparent']
  }
}
