// The abort-listener leak `npm run bench -- mcp` printed (`MaxListenersExceededWarning: … 1834 abort
// listeners added to [AbortSignal]`): the SDK's Streamable HTTP client transport passes its one
// long-lived signal to every fetch, and Node's fetch holds an abort listener on it per request until the
// Request is garbage collected. With scopedSignalFetch (@gate/mcp, client-fetch.ts) each request has
// its own signal, and the transport's holds only the requests in flight. Driven through the real
// `gate mcp serve-http` past Node's 1,500-listener warning threshold, with --trace-warnings on the edge
// too, so neither side may print the warning.
import t from 'tap'
import { getEventListeners } from 'node:events'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { startGateMcpHttp } from '../testing/mcp-http-session.js'

const CALLS = 1600

t.test(`${CALLS} calls on one session leave no abort listener behind, on the client or the edge`, async t => {
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH], {
    env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --trace-warnings`.trim() },
  })
  const { client, transport } = await gate.connect()
  const warnings: Error[] = []
  const onWarning = (warning: Error) => void (warning.name === 'MaxListenersExceededWarning' && warnings.push(warning))
  process.on('warning', onWarning)
  t.teardown(() => void process.off('warning', onWarning))
  const signal = (transport as unknown as { _abortController: AbortController })._abortController.signal
  let most = 0
  for (let i = 0; i < CALLS; i++) {
    await client.callTool({ name: 'echo', arguments: { text: String(i) } })
    most = Math.max(most, getEventListeners(signal, 'abort').length)
  }
  t.ok(most <= 4, `the transport's signal held at most ${most} abort listeners (one per request in flight, and the GET stream's)`)
  t.same(warnings.map(w => w.message), [], 'the client printed no MaxListenersExceededWarning')
  t.notMatch(gate.proc.output(), /MaxListenersExceededWarning/, 'the edge printed none')
})
