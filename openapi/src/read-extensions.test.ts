import t from 'tap'
import { readExtensions } from './read-extensions.js'
import { manifestFromSpec } from './manifest-from-spec.js'
import { routeTableFromSpec } from './route-table.js'
import { parseDocument } from './parse-document.js'

const read = (operation: Record<string, unknown>) => readExtensions(operation, new WeakMap(), 'op')

t.test('every key absent gives the defaults', async t => {
  t.same(read({}), { sensitivity: 'internal', sideEffects: undefined, approvalRequired: false, budgetLimit: undefined, publish: true })
})

t.test('well-typed values are read', async t => {
  t.same(
    read({ 'x-gate-sensitivity': 'restricted', 'x-gate-side-effects': false, 'x-gate-approval-required': true, 'x-gate-budget-limit': 250, 'x-gate-publish': false }),
    { sensitivity: 'restricted', sideEffects: false, approvalRequired: true, budgetLimit: 250n, publish: false },
  )
  for (const s of ['public', 'internal', 'sensitive', 'restricted']) t.equal(read({ 'x-gate-sensitivity': s }).sensitivity, s)
})

t.test('a value of the wrong JSON type is treated as absent', async t => {
  const wrong = { 'x-gate-sensitivity': 3, 'x-gate-side-effects': 'true', 'x-gate-approval-required': 1, 'x-gate-budget-limit': '100', 'x-gate-publish': 'false' }
  t.same(read(wrong), read({}))
  t.same(read({ 'x-gate-side-effects': null, 'x-gate-approval-required': [], 'x-gate-publish': 0 }), read({}))
})

t.test('an unrecognized sensitivity (including another letter case) is treated as absent', async t => {
  for (const s of ['secret', 'Public', 'RESTRICTED', '']) t.equal(read({ 'x-gate-sensitivity': s }).sensitivity, 'internal', s)
})

t.test('a budget must be an unsigned 64-bit integer; negative, fractional or larger values are absent', async t => {
  t.equal(read({ 'x-gate-budget-limit': 0 }).budgetLimit, 0n)
  t.equal(read({ 'x-gate-budget-limit': -1 }).budgetLimit, undefined)
  t.equal(read({ 'x-gate-budget-limit': 1.5 }).budgetLimit, undefined)
  t.equal(read({ 'x-gate-budget-limit': 1e30 }).budgetLimit, undefined)
  t.equal(read({ 'x-gate-budget-limit': Number.MAX_SAFE_INTEGER }).budgetLimit, 9007199254740991n)
})

t.test('a budget above 2^53 with no exact source is refused rather than rounded', async t => {
  t.throws(() => read({ 'x-gate-budget-limit': 2 ** 60 }), { kind: 'InvalidSpec', message: /op\.x-gate-budget-limit/ })
})

const budgetDoc = (literal: string) =>
  `{"openapi":"3.0.0","info":{},"paths":{"/p":{"post":{"x-gate-budget-limit": ${literal}}}}}`

t.test('JSON budgets up to 2^64 - 1 survive exactly end to end', async t => {
  for (const [literal, expected] of [
    ['18446744073709551615', 18446744073709551615n],
    ['9007199254740993', 9007199254740993n],
    ['1.8446744073709551615e19', 18446744073709551615n],
  ] as const) {
    t.equal(routeTableFromSpec(budgetDoc(literal)).routes[0]!.budgetLimit, expected, literal)
  }
  t.equal(routeTableFromSpec(budgetDoc('18446744073709551616')).routes[0]!.budgetLimit, undefined, '2^64 is out of range')
  t.equal(routeTableFromSpec(budgetDoc('9007199254740993.5')).routes[0]!.budgetLimit, undefined, 'not an integer')
})

t.test('YAML budgets up to 2^64 - 1 survive exactly end to end', async t => {
  const yaml = 'openapi: 3.0.0\ninfo: {}\npaths:\n  /p:\n    post:\n      x-gate-budget-limit: 18446744073709551615\n      x-gate-sensitivity: sensitive\n'
  const [route] = routeTableFromSpec(yaml).routes
  t.equal(route!.budgetLimit, 18446744073709551615n)
  t.equal(route!.sensitivity, 'sensitive')
  t.equal(routeTableFromSpec(yaml.replace('18446744073709551615', '"12"')).routes[0]!.budgetLimit, undefined, 'a string is the wrong type')
})

t.test('extensions are read from the raw operation, even when the budget key also appears in schemas', async t => {
  const doc = JSON.stringify({
    openapi: '3.1.0',
    info: {},
    paths: { '/p': { get: { 'x-gate-budget-limit': 5, parameters: [{ name: 'q', in: 'query', schema: { type: 'integer', 'x-gate-budget-limit': 1e20 } }] } } },
  })
  t.equal(routeTableFromSpec(doc).routes[0]!.budgetLimit, 5n)
  t.doesNotThrow(() => JSON.stringify(manifestFromSpec(doc)), 'no BigInt leaks into the manifest')
  t.ok(parseDocument(doc))
})
