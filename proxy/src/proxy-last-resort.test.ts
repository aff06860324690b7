// The last resort (issue 45): an upstream client that throws, which the real one never does by
// contract, is injected in its place. The request is a 502 naming a finalized receipt that records
// the 502, the failure is reported, and the proxy answers the next request.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { createProxy } from './proxy.js'
import type { UpstreamRelay } from './ports.js'
import { createFakeEvaluator } from './testing/fake-evaluator.js'

async function startProxy(t: Test, upstream: UpstreamRelay) {
  const evaluator = createFakeEvaluator(() => ({ verdict: 'allow' }))
  const reported: unknown[] = []
  const proxy = createProxy(evaluator, { upstream: 'http://127.0.0.1:9' }, { upstream, onUnexpectedError: err => reported.push(err) })
  const server = createServer((req, res) => void proxy.handle(req, res))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, evaluator, reported }
}

const throwing = (how: 'sync' | 'async'): UpstreamRelay => ({
  relay: () => {
    const err = new TypeError('the upstream client broke')
    if (how === 'sync') throw err
    return Promise.reject(err)
  },
  close: async () => {},
})

for (const how of ['sync', 'async'] as const) {
  t.test(`an upstream client that throws (${how}) answers 502 with a receipt, and the proxy goes on`, async t => {
    const { url, evaluator, reported } = await startProxy(t, throwing(how))
    for (const attempt of [1, 2]) {
      const res = await request(`${url}/pets`)
      const text = await res.body.text()
      t.equal(res.statusCode, 502, `request ${attempt}: 502`)
      const id = res.headers['x-gate-receipt-id']
      t.match(text, /^upstream relay failed: the upstream client broke \(receipt [0-9a-f]{64}\)\n$/)
      const final = evaluator.finalized.find(r => r.id === id)
      t.equal(final?.response_status, 502, `request ${attempt}: the finalized receipt records the 502`)
    }
    t.equal(reported.length, 2, 'each failure was reported')
    t.match(reported[0], { name: 'TypeError', message: 'the upstream client broke' })
  })
}

t.test('an upstream client that throws after the head went out cuts that answer only', async t => {
  const relayAfterHead: UpstreamRelay = {
    relay: async (_request, res, onHead) => {
      await onHead(200, { 'content-type': 'text/plain' })
      res.write('partial')
      // the head and the first chunk leave before the failure
      await new Promise(resolve => res.socket!.write('', resolve))
      throw new TypeError('broke mid-body')
    },
    close: async () => {},
  }
  const { url, reported } = await startProxy(t, relayAfterHead)
  const res = await request(`${url}/pets`)
  t.equal(res.statusCode, 200, 'the head had gone out')
  await t.rejects(res.body.text(), 'the body is cut')
  t.equal(reported.length, 1)
  const next = await request(`${url}/pets`)
  t.equal(next.statusCode, 200, 'the proxy still answers')
  await next.body.dump().catch(() => {})
})
