// Koa 3 adapter: maps the context into the core's input and the outcome back, nothing else.
// Body: when Gate runs first it reads ctx.req and pushes the bytes back, so @koa/bodyparser parses the
// same bytes after it. When the parser runs first, Gate hashes `ctx.request.rawBody` (the raw text it
// keeps, as UTF-8); with neither, Gate fails closed (500).
import type Koa from 'koa'
import { createGateCore, type GateContext, type GateMiddlewareOptions, type GateRequestInput } from '@gate/sdk'

declare module 'koa' {
  interface DefaultState {
    /** Gate's verdict and verified receipt; null when the path is in `skip`. */
    gate?: GateContext | null
  }
}

export type GateKoaMiddleware = Koa.Middleware & { close(): Promise<void> }

/** Gate middleware for Koa 3: `app.use(gate())`. The handler reads `ctx.state.gate`. */
export function gate(options?: GateMiddlewareOptions): GateKoaMiddleware {
  const core = createGateCore(options)
  const middleware: Koa.Middleware = async (ctx, next) => {
    const outcome = await core.decide(toGateInput(ctx))
    ctx.set(outcome.headers)
    if (!outcome.allowed) {
      ctx.status = outcome.status
      ctx.body = outcome.body
      return
    }
    ctx.state.gate = outcome.gate
    for (const name of outcome.removeHeaders) delete ctx.req.headers[name]
    if (outcome.rawQuery !== null) {
      ctx.querystring = outcome.rawQuery
      ctx.originalUrl = ctx.request.originalUrl = ctx.url
    }
    await next()
  }
  return Object.assign(middleware, { close: () => core.close() })
}

function toGateInput(ctx: Koa.Context): GateRequestInput {
  const rawBody = (ctx.request as { rawBody?: unknown }).rawBody
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute
  return {
    method: ctx.method,
    path: ctx.path,
    rawQuery: ctx.querystring,
    headers: ctx.headers,
    rawHeaders: ctx.req.rawHeaders,
    body: typeof rawBody === 'string' ? rawBody : ctx.req,
    routePattern: typeof matched === 'string' ? matched : null,
  }
}
