// The decision line is the line pino writes for the same fields, and the lines of one event-loop turn
// reach the destination in one write.
import t from 'tap'
import type { pino } from 'pino'
import { ANONYMOUS_CALLER } from '@gate/sdk'
import { setupKernel, kernelRequest } from '../testing/kernel-setup.js'
import { createDecisionLog } from './decision-log.js'
import { createGateLogger } from './logger.js'
import { reasonLabel } from './metrics.js'

function capture() {
  const writes: string[] = []
  return { writes, stream: { write: (text: string) => writes.push(text) } as unknown as pino.DestinationStream }
}

t.test('a decision line is byte for byte the line pino writes for its fields', async t => {
  const { kernel } = setupKernel()
  const evaluation = await kernel.evaluate({ request: kernelRequest('POST', '/pets', { request_id: 'req "quoted"\n', caller: ANONYMOUS_CALLER }) })
  const ours = capture()
  const theirs = capture()
  createDecisionLog(createGateLogger('gate sidecar', 'info', ours.stream), 'info')(evaluation, '/pets', 0.0012345)
  await new Promise(resolve => setImmediate(resolve))
  createGateLogger('gate sidecar', 'info', theirs.stream).info(
    {
      event: 'decision',
      request_id: evaluation.receipt.request_id,
      method: evaluation.receipt.method,
      route: '/pets',
      verdict: evaluation.verdict.verdict,
      reason_code: reasonLabel(evaluation.verdict),
      status: evaluation.status,
      receipt_id: evaluation.receipt.id,
      caller_identity_hash: evaluation.receipt.caller_identity_hash,
      latency_ms: Math.round(0.0012345 * 1e6) / 1000,
    },
    'decision',
  )
  t.equal(ours.writes.length, 1)
  const withoutTime = (line: string) => line.replace(/"time":"[^"]*"/, '"time":""')
  t.equal(withoutTime(ours.writes[0]!), withoutTime(theirs.writes[0]!))
  t.match(JSON.parse(ours.writes[0]!), { level: 'info', event: 'decision', request_id: 'req "quoted"\n', verdict: 'deny', reason_code: 'capability_required', status: 403 })
})

t.test('the lines of one turn reach the destination in one write', async t => {
  const { kernel } = setupKernel()
  const evaluation = await kernel.evaluate({ request: kernelRequest('GET', '/pets') })
  const { writes, stream } = capture()
  const log = createDecisionLog(createGateLogger('gate sidecar', 'debug', stream), 'debug')
  for (let i = 0; i < 5; i++) log(evaluation, '/pets', 0.001)
  t.equal(writes.length, 0, 'nothing written within the turn')
  await new Promise(resolve => setImmediate(resolve))
  t.equal(writes.length, 1)
  t.equal(writes[0]!.split('\n').filter(Boolean).length, 5)
  for (const line of writes[0]!.split('\n').filter(Boolean)) t.match(JSON.parse(line), { level: 'debug', event: 'decision', verdict: 'allow' })
})
