import t from 'tap'
import { classifyMethod, classifyPolicy, hasSideEffects } from './classify-policy.js'
import { readExtensions } from './read-extensions.js'

const ext = (raw: Record<string, unknown> = {}) => readExtensions(raw, new WeakMap(), 'op')
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']

t.test('by method: GET, HEAD, OPTIONS are SessionAllow; POST, PUT, PATCH, DELETE are DenyByDefault', async t => {
  for (const m of METHODS) {
    const expected = ['GET', 'HEAD', 'OPTIONS'].includes(m) ? 'SessionAllow' : 'DenyByDefault'
    t.same(classifyPolicy(m, ext()), { decision: expected, why: 'method' }, m)
  }
})

t.test('an explicit x-gate-side-effects overrides the method both ways', async t => {
  for (const m of METHODS) {
    t.same(classifyPolicy(m, ext({ 'x-gate-side-effects': true })), { decision: 'DenyByDefault', why: 'side_effects' }, `${m} true`)
    t.same(classifyPolicy(m, ext({ 'x-gate-side-effects': false })), { decision: 'SessionAllow', why: 'side_effects' }, `${m} false`)
  }
})

t.test('x-gate-approval-required true gives DenyByDefault whatever the method or side effects', async t => {
  for (const m of METHODS) {
    for (const sideEffects of [true, false, undefined]) {
      const raw = { 'x-gate-approval-required': true, ...(sideEffects === undefined ? {} : { 'x-gate-side-effects': sideEffects }) }
      t.same(classifyPolicy(m, ext(raw)), { decision: 'DenyByDefault', why: 'approval' }, `${m} ${sideEffects}`)
    }
  }
})

t.test('approval false or absent does not decide', async t => {
  t.same(classifyPolicy('GET', ext({ 'x-gate-approval-required': false })), { decision: 'SessionAllow', why: 'method' })
})

t.test('sensitivity never changes the decision', async t => {
  t.same(classifyPolicy('GET', ext({ 'x-gate-sensitivity': 'restricted' })), { decision: 'SessionAllow', why: 'method' })
})

t.test('a method outside the seven is DenyByDefault (fail closed)', async t => {
  t.equal(classifyMethod('TRACE'), 'DenyByDefault')
  t.equal(classifyMethod('get'), 'DenyByDefault', 'methods are case-sensitive')
})

t.test('side effects follow the explicit flag, else the method, and ignore approval', async t => {
  t.equal(hasSideEffects('GET', ext()), false)
  t.equal(hasSideEffects('POST', ext()), true)
  t.equal(hasSideEffects('POST', ext({ 'x-gate-side-effects': false })), false)
  t.equal(hasSideEffects('GET', ext({ 'x-gate-approval-required': true })), false)
})
