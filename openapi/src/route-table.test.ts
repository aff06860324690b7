import t from 'tap'
import { routeTableFromSpec } from './route-table.js'

const input = JSON.stringify({
  openapi: '3.1.0',
  info: {},
  paths: {
    '/pets/{id}': {
      get: { operationId: 'getPet', 'x-gate-sensitivity': 'public' },
      delete: { 'x-gate-approval-required': true, 'x-gate-publish': false, 'x-gate-budget-limit': 500 },
    },
    '/admin': { get: { 'x-gate-side-effects': true, 'x-gate-sensitivity': 'nope' } },
  },
})

t.test('every operation is a row, in path then method order, with its policy and flags', async t => {
  const { routes } = routeTableFromSpec(input)
  t.same(routes, [
    { method: 'GET', pattern: '/admin', decision: 'DenyByDefault', why: 'side_effects', sensitivity: 'internal', approvalRequired: false, published: true, toolName: 'GET /admin' },
    { method: 'GET', pattern: '/pets/{id}', operationId: 'getPet', decision: 'SessionAllow', why: 'method', sensitivity: 'public', approvalRequired: false, published: true, toolName: 'getPet' },
    { method: 'DELETE', pattern: '/pets/{id}', decision: 'DenyByDefault', why: 'approval', sensitivity: 'internal', approvalRequired: true, budgetLimit: 500n, published: false, toolName: 'DELETE /pets/{id}' },
  ])
})

t.test('an unpublished operation stays in the route table', async t => {
  t.ok(routeTableFromSpec(input).routes.some(r => r.published === false && r.method === 'DELETE'))
})

t.test('the table is frozen', async t => {
  const table = routeTableFromSpec(input)
  t.ok(Object.isFrozen(table.routes))
  t.ok(Object.isFrozen(table.routes[0]))
})

t.test('the route table fails on exactly the documents the tools fail on', async t => {
  const bad = JSON.stringify({ openapi: '3.1.0', info: {}, paths: { '/x': { get: { responses: { '200': { content: { 'application/json': { schema: { $ref: '#/nope' } } } } } } } } })
  t.throws(() => routeTableFromSpec(bad), { name: 'OpenApiError', kind: 'UnresolvedRef' })
})
