// The agent `gate run` starts: its command with the terminal's stdin, stdout and stderr, the caller's
// environment without Gate's own variables (a control token must never reach the agent it guards)
// plus the wire's socket and version, SIGINT and SIGTERM passed on to it while it runs.
// Its exit status becomes `gate run`'s, the way a shell reports one: the code it exited with, or 128
// plus the number of the signal that ended it, or 127 when the command cannot be started.
import { spawn } from 'node:child_process'
import { constants } from 'node:os'

export interface AgentProcessOptions {
  command: string
  args: readonly string[]
  /** Added to Gate's environment, from which every GATE_* variable is removed first. */
  env: Record<string, string>
  log: (line: string) => void
}

/** A running agent; `exited` resolves with its exit status. */
export interface AgentProcess {
  pid: number | undefined
  exited: Promise<number>
}

const FORWARDED = ['SIGINT', 'SIGTERM'] as const

export function startAgent(options: AgentProcessOptions): AgentProcess {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('GATE_')) env[key] = value
  const child = spawn(options.command, [...options.args], { env: { ...env, ...options.env }, stdio: 'inherit' })
  // while the agent runs, these signals are its to handle: `gate run` stops when the agent exits
  const forward = (signal: NodeJS.Signals) => {
    options.log(`${signal} received: passed on to the agent (pid ${child.pid})`)
    child.kill(signal)
  }
  for (const signal of FORWARDED) process.on(signal, forward)
  const exited = new Promise<number>(resolve => {
    child.once('error', err => {
      options.log(`cannot start the agent ${JSON.stringify(options.command)}: ${(err as NodeJS.ErrnoException).code ?? err.message}`)
      resolve(127)
    })
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0))))
  }).finally(() => {
    for (const signal of FORWARDED) process.off(signal, forward)
  })
  return { pid: child.pid, exited }
}
