// OpenApiError (sidecar/src/errors.ts, OpenAPI section) against spec 01's table, both ways, and
// every kind raised through the public surface.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { OPENAPI_ERROR_KINDS, type OpenApiError, isOpenApiError, toolsFromSpec } from './index.js'

const specDir = process.env.GATE_SPEC_DIR ?? new URL('../../../shared/spec/', import.meta.url).pathname

t.test('the kinds match the OpenApiError table of spec 01', async t => {
  const spec = readFileSync(`${specDir}/01-openapi-tools-and-proxy.md`, 'utf8')
  const part = spec.slice(spec.indexOf('`OpenApiError` (conversion library)'), spec.indexOf('`ProtectError` (proxy)'))
  const kinds = [...part.matchAll(/^\| `([A-Za-z]+)` \|/gm)].map(m => m[1])
  t.same(kinds, [...OPENAPI_ERROR_KINDS])
})

const base = (paths: unknown) => JSON.stringify({ openapi: '3.1.0', info: {}, paths })
const triggers: Record<string, string> = {
  InvalidJson: '{"openapi": ',
  InvalidYaml: 'openapi: [3.1.0\n',
  MissingField: base({ '/p': { get: { parameters: [{ in: 'query' }] } } }),
  UnsupportedVersion: JSON.stringify({ openapi: '2.0', info: {}, paths: {} }),
  UnresolvedRef: base({ '/p': { get: { parameters: [{ $ref: '#/components/parameters/none' }] } } }),
  InvalidSpec: base({ '/p': { get: { parameters: [{ name: 'a', in: 'body' }] } } }),
}

t.test('every kind is raised through toolsFromSpec as a gate_bad_request GateError', async t => {
  t.same(Object.keys(triggers), [...OPENAPI_ERROR_KINDS])
  for (const [kind, input] of Object.entries(triggers)) {
    try {
      toolsFromSpec(input)
      t.fail(kind)
    } catch (err) {
      t.ok(isOpenApiError(err), kind)
      const e = err as OpenApiError
      t.equal(e.kind, kind)
      t.equal(e.code, 'gate_bad_request')
      t.equal(e.status, 400)
      t.equal(e.name, 'OpenApiError')
      t.ok(e.message.startsWith(`${kind}: `), e.message)
    }
  }
})

t.test('isOpenApiError recognises a copy by code, name and kind, and nothing else', async t => {
  const foreign = Object.assign(new Error('x'), { code: 'gate_bad_request', name: 'OpenApiError', kind: 'InvalidSpec' })
  t.ok(isOpenApiError(foreign))
  t.notOk(isOpenApiError(Object.assign(new Error('x'), { code: 'gate_bad_request', name: 'OpenApiError', kind: 'Other' })))
  t.notOk(isOpenApiError({ code: 'gate_bad_request', name: 'OpenApiError', kind: 'InvalidSpec' }))
})
