// Fastify 5 plugin: maps the request into the core's input and the outcome back, nothing else. It runs
// in `preParsing`, after routing (so the route pattern is known) and before any content-type parser:
// Gate reads the payload stream and pushes the bytes back, and Fastify's parser reads the same bytes.
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { appTarget, createGateCore, type GateContext, type GateMiddlewareOptions, type GateRequestInput, type NodeBodyStream } from '@gate/sdk'

declare module 'fastify' {
  interface FastifyRequest {
    /** Gate's verdict and verified receipt; null when the path is in `skip` (or before Gate ran). */
    gate: GateContext | null
  }
}

/** Options Fastify itself reads from `register(plugin, options)`; not Gate's. */
const REGISTER_OPTIONS = new Set(['prefix', 'logLevel', 'logSerializers'])

const plugin: FastifyPluginAsync<GateMiddlewareOptions> = async (fastify, options) => {
  const core = createGateCore(Object.fromEntries(Object.entries(options).filter(([k]) => !REGISTER_OPTIONS.has(k))))
  fastify.decorateRequest('gate', null)
  fastify.addHook('onClose', () => core.close())
  fastify.addHook('preParsing', async (request, reply, payload) => {
    const outcome = await core.decide(toGateInput(request, payload as unknown as NodeBodyStream))
    reply.headers(outcome.headers)
    if (!outcome.allowed) return reply.code(outcome.status).send(outcome.body)
    request.gate = outcome.gate
    for (const name of outcome.removeHeaders) delete request.headers[name]
    if (outcome.rawQuery !== null) {
      // Fastify parsed the query before this hook: its parsed copy loses the capability too
      delete (request.query as Record<string, unknown>).gate_capability
      request.raw.url = appTarget(request.url, outcome)
    }
    return payload
  })
}

/** Gate as a Fastify plugin: `fastify.register(gate, options)`. The handler reads `request.gate`. */
export const gate = fp(plugin, { name: '@gate/fastify', fastify: '5.x' })

function toGateInput(request: FastifyRequest, payload: NodeBodyStream): GateRequestInput {
  const q = request.url.indexOf('?')
  return {
    method: request.method,
    path: pathOf(request.url),
    rawQuery: q < 0 ? '' : request.url.slice(q + 1),
    headers: request.headers,
    rawHeaders: request.raw.rawHeaders,
    body: payload,
    routePattern: request.routeOptions.url ?? null,
  }
}

function pathOf(url: string): string {
  const q = url.indexOf('?')
  return q < 0 ? url : url.slice(0, q)
}
