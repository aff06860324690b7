// x-gate-sensitivity (spec 01): restricted always requires approval, through the approval flow of
// docs/approvals.md, on every call and whatever the route's policy; the other levels never do.
import t from 'tap'
import { createRouteTable, type RouteEntry, type Sensitivity } from '@gate/openapi'
import { kernelRequest, kernelToken, setupKernel } from '../../testing/kernel-setup.js'
import { encodeCapabilityToken } from '../capability-token.js'

function route(method: RouteEntry['method'], pattern: string, sensitivity: Sensitivity, decision: RouteEntry['decision']): RouteEntry {
  return { method, pattern, decision, why: 'method', sensitivity, approvalRequired: false, published: true, toolName: `${method} ${pattern}` }
}

const table = createRouteTable([
  route('GET', '/vault/{id}', 'restricted', 'SessionAllow'),
  route('DELETE', '/vault/{id}', 'restricted', 'DenyByDefault'),
  route('GET', '/ledger', 'sensitive', 'SessionAllow'),
  route('POST', '/ledger', 'sensitive', 'DenyByDefault'),
])

t.test('restricted: every call needs its own approval, on a session-allowed route too', async t => {
  const { kernel, ports } = setupKernel({ routeTable: table })
  const header = encodeCapabilityToken(kernelToken([{ server_id: 'http', tool_name: '*' }]))
  for (const [method, capabilityHeader] of [['GET', undefined], ['DELETE', header]] as const) {
    const first = await kernel.evaluate({ request: kernelRequest(method, '/vault/1'), capabilityHeader })
    t.match(first.verdict, { verdict: 'deny', guard: 'ApprovalGuard', http_status: 409, details: { reason_code: 'approval_required' } }, method)
    const id = first.approval!.approval_id
    ports.approvalRecords.get(id)!.state = 'approved'
    t.equal((await kernel.evaluate({ request: kernelRequest(method, '/vault/1'), capabilityHeader, approvalId: id })).verdict.verdict, 'allow', `${method}: approved once`)
    t.match((await kernel.evaluate({ request: kernelRequest(method, '/vault/1'), capabilityHeader, approvalId: id })).verdict, { verdict: 'deny', details: { reason_code: 'approval_invalid' } }, `${method}: not twice`)
    t.match((await kernel.evaluate({ request: kernelRequest(method, '/vault/1'), capabilityHeader })).verdict, { http_status: 409 }, `${method}: the next call asks again`)
  }
  t.match((await kernel.evaluate({ request: kernelRequest('DELETE', '/vault/1') })).verdict, { guard: 'CapabilityGuard' }, 'the capability is checked before an approval is opened')
})

t.test('sensitive requires no approval of its own', async t => {
  const { kernel } = setupKernel({ routeTable: table })
  const header = encodeCapabilityToken(kernelToken([{ server_id: 'http', tool_name: '*' }]))
  t.equal((await kernel.evaluate({ request: kernelRequest('GET', '/ledger') })).verdict.verdict, 'allow')
  t.equal((await kernel.evaluate({ request: kernelRequest('POST', '/ledger'), capabilityHeader: header })).verdict.verdict, 'allow')
})
