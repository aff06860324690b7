// Starts the real `gate run` for end-to-end tests with the driven test agent of @gate/wire/testing:
// the agent's stdin and stdout (which `gate run` hands to it) carry the test's commands and the agent's
// events, Gate's log is stderr. Resolves once the agent is connected to the wire (its ready event) and
// Gate has logged its control URL (never a sleep). Killed in teardown.
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { DRIVEN_AGENT_PATH, AgentDriver } from '@gate/wire/testing'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { GATE_MAIN } from './spawn-gate.js'

// the control routes' token (given, so no token file is made in the working directory)
const TEST_CONTROL_TOKEN = 'wire-test-control-token-0123456789'

/** `--tool-server fx=…` naming the fixture MCP server. */
export const FIXTURE_TOOL_SERVER = `fx='${process.execPath}' '${FIXTURE_SERVER_PATH}'`

export interface GateRun {
  child: ChildProcess
  agent: AgentDriver
  controlUrl: string
  socketPath: string
  /** Gate's stderr so far. */
  output(): string
  waitForOutput(pattern: RegExp): Promise<RegExpExecArray>
  /** Resolves with `gate run`'s exit status. */
  exited: Promise<number | null>
}

/** `gate run <args> -- node driven-agent.js`. */
export async function startGateRun(t: Test, args: string[], env: Record<string, string> = {}): Promise<GateRun> {
  const child = spawn(process.execPath, [GATE_MAIN, 'run', ...args, '--', process.execPath, DRIVEN_AGENT_PATH], { env: { ...process.env, GATE_CONTROL_TOKEN: TEST_CONTROL_TOKEN, ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  let out = ''
  const waiters = new Set<() => void>()
  child.stderr!.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
    for (const w of waiters) w()
  })
  const waitForOutput = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(out)
        if (m === null) return
        waiters.delete(check)
        resolve(m)
      }
      waiters.add(check)
      void exited.then(code => {
        if (waiters.has(check)) reject(new Error(`gate run exited (${code}) before ${pattern}:\n${out}`))
      })
      check()
    })
  const agent = new AgentDriver(child.stdout!, child.stdin!)
  const controlUrl = (await waitForOutput(/control routes \(approvals\) on (http:\/\/[^\s"]+)/))[1]!
  const ready = await Promise.race([agent.waitFor(e => e.event === 'ready'), exited.then(code => Promise.reject(new Error(`gate run exited (${code}):\n${out}`)))])
  return { child, agent, controlUrl, socketPath: ready.socket as string, output: () => out, waitForOutput, exited }
}
