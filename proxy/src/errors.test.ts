// ProtectError kinds against spec 01's list and the egress rejections against spec 03's, both ways.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { EgressDeniedError, PROTECT_ERROR_KINDS, ProtectError, isProtectError, type EgressRejection } from './errors.js'

const specDir = process.env.GATE_SPEC_DIR ?? new URL('../../../shared/spec/', import.meta.url).pathname

t.test('the kinds match the ProtectError list of spec 01', async t => {
  const spec = readFileSync(`${specDir}/01-openapi-tools-and-proxy.md`, 'utf8')
  const line = spec.slice(spec.indexOf('`ProtectError` (proxy):'))
  const list = line.slice(0, line.indexOf('\n'))
  // the kinds are the backticked names outside the parenthesized explanations
  const bare = list.slice(list.indexOf(':') + 1).replace(/\([^)]*\)/g, '')
  const kinds = [...bare.matchAll(/`([A-Za-z]+)`/g)].map(m => m[1])
  t.same(kinds, [...PROTECT_ERROR_KINDS])
})

t.test('the egress rejections match spec 03', async t => {
  const spec = readFileSync(`${specDir}/03-trust-control-wire-cluster.md`, 'utf8')
  const line = spec.slice(spec.indexOf('Egress rejections (structured):'))
  const names = [...line.slice(0, line.indexOf('\n')).matchAll(/`([A-Za-z0-9]+)`/g)].map(m => m[1] as EgressRejection)
  t.ok(names.length >= 9)
  for (const name of names) t.equal(new EgressDeniedError(name, 'x').rejection, name)
})

t.test('a ProtectError carries its kind, a gate code and a message starting with the kind', async t => {
  for (const kind of PROTECT_ERROR_KINDS) {
    const e = new ProtectError(kind, 'detail')
    t.ok(isProtectError(e))
    t.equal(e.kind, kind)
    t.match(e.code, /^gate_/)
    t.equal(e.message, `${kind}: detail`)
  }
  t.equal(new ProtectError('PendingApproval', 'x').status, 409)
  t.equal(new ProtectError('Upstream', 'x').status, 502)
  t.notOk(isProtectError(new Error('x')))
})
