// The agent's exit status becomes gate run's as a shell reports it; Gate's own variables never reach it.
import t from 'tap'
import { startAgent } from './agent-process.js'

const log = () => {}

t.test("the agent's exit code, 128 + a signal's number, or 127 when it cannot start", async t => {
  t.equal(await startAgent({ command: process.execPath, args: ['-e', 'process.exit(7)'], env: {}, log }).exited, 7)
  t.equal(await startAgent({ command: 'sh', args: ['-c', 'kill -TERM $$'], env: {}, log }).exited, 143)
  t.equal(await startAgent({ command: '/nonexistent/agent', args: [], env: {}, log }).exited, 127)
})

t.test('the agent gets the wire variables and none of Gate\'s GATE_* variables', async t => {
  process.env.GATE_CONTROL_TOKEN = 'must-not-leak-0123456789'
  t.teardown(() => delete process.env.GATE_CONTROL_TOKEN)
  const script = "process.exit(process.env.GATE_CONTROL_TOKEN === undefined && process.env.GATE_WIRE_SOCKET === '/x' ? 0 : 1)"
  t.equal(await startAgent({ command: process.execPath, args: ['-e', script], env: { GATE_WIRE_SOCKET: '/x' }, log }).exited, 0)
})
