// Express 5 adapter: maps the request into the core's input and the outcome back, nothing else.
// Body: when Gate runs first it reads the stream and pushes the bytes back, so express.json() and
// friends parse the same bytes after it. When a parser runs first, keep the raw bytes with
// `express.json({ verify: captureRawBody })`; without them Gate fails closed (500).
import type { IncomingMessage } from 'node:http'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { appTarget, createGateCore, type GateContext, type GateMiddlewareOptions, type GateRequestInput } from '@gate/sdk'

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express augments Request through this global namespace
  namespace Express {
    interface Request {
      /** Gate's verdict and verified receipt; null when the path is in `skip`. */
      gate?: GateContext | null
      /** Raw body bytes kept by `captureRawBody` when a parser runs before Gate. */
      rawBody?: Buffer
    }
  }
}

export type GateExpressMiddleware = RequestHandler & { close(): Promise<void> }

/** Gate middleware for Express 5: `app.use(gate())`, or per route (`app.post('/pets/:id', g, h)`) for the route pattern. */
export function gate(options?: GateMiddlewareOptions): GateExpressMiddleware {
  const core = createGateCore(options)
  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    core.decide(toGateInput(req)).then(outcome => {
      res.set(outcome.headers)
      if (!outcome.allowed) {
        res.status(outcome.status).json(outcome.body)
        return
      }
      req.gate = outcome.gate
      for (const name of outcome.removeHeaders) delete req.headers[name]
      req.url = appTarget(req.url, outcome)
      req.originalUrl = appTarget(req.originalUrl, outcome)
      next()
    }, next)
  }
  return Object.assign(middleware, { close: () => core.close() })
}

/** `express.json({ verify: captureRawBody })`: keeps the bytes Gate must hash when the parser runs first. */
export function captureRawBody(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  ;(req as Request).rawBody = buf
}

function toGateInput(req: Request): GateRequestInput {
  const url = req.originalUrl
  const q = url.indexOf('?')
  return {
    method: req.method,
    path: q < 0 ? url : url.slice(0, q),
    rawQuery: q < 0 ? '' : url.slice(q + 1),
    headers: req.headers,
    rawHeaders: req.rawHeaders,
    body: req.rawBody ?? req,
    routePattern: typeof req.route?.path === 'string' ? req.route.path : null,
  }
}
