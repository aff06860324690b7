// Starts the real `gate` command as a child process for end-to-end tests and waits for its
// "listening on URL" line (never a sleep). The child is killed in teardown.
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// A start takes under a second on a quiet machine; a loaded two-core CI host has taken over 20 s.
const READY_TIMEOUT_MS = 60_000

export const GATE_MAIN = fileURLToPath(new URL('../cli/main.js', import.meta.url))

// Children never outlive the test process: a test that times out (tap sends SIGTERM) or crashes must
// not leave a sidecar listening behind it.
const live = new Set<ChildProcess>()
function track(child: ChildProcess): void {
  live.add(child)
  child.once('exit', () => live.delete(child))
}
function killAll(): void {
  for (const child of live) child.kill('SIGKILL')
}
process.on('exit', killAll)
process.once('SIGTERM', () => {
  killAll()
  process.kill(process.pid, 'SIGTERM')
})

export interface GateProcess {
  url: string
  child: ChildProcess
  /** Everything the process printed so far (stdout and stderr). */
  output(): string
  /** Sends a signal and resolves with the exit code (or the signal name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>
  exited: Promise<number | string>
}

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** Milliseconds to wait for the listening line before failing. */
  readyTimeoutMs?: number
  /** The line that means "started", its first group the URL; default the listening line. */
  readyPattern?: RegExp
}

/** Spawns `gate <args>` and resolves once it listens; rejects with its output if it exits first. */
export function spawnGate(args: string[], options: SpawnOptions = {}): Promise<GateProcess> {
  const child = spawn(process.execPath, [GATE_MAIN, ...args], {
    env: { ...process.env, ...options.env },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  track(child)
  let out = ''
  const exited = new Promise<number | string>(resolve => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`gate ${args.join(' ')} did not start within ${options.readyTimeoutMs ?? READY_TIMEOUT_MS} ms:\n${out}`))
    }, options.readyTimeoutMs ?? READY_TIMEOUT_MS)
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8')
      // `gate sidecar` says "listening on URL"; `gate api protect` "protecting UPSTREAM with N routes on URL"
      const m = (options.readyPattern ?? /(?:listening on|routes on) ((?:https?:\/\/|unix:)[^\s"]+)/).exec(out)
      if (m !== null) {
        clearTimeout(timer)
        child.stdout!.off('data', onData)
        child.stderr!.off('data', onData)
        const more = (chunk: Buffer) => (out += chunk.toString('utf8'))
        child.stdout!.on('data', more)
        child.stderr!.on('data', more)
        resolve({
          url: m[1] as string,
          child,
          exited,
          output: () => out,
          stop(signal = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal)
            return exited
          },
        })
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    exited.then(code => {
      clearTimeout(timer)
      reject(new Error(`gate ${args.join(' ')} exited (${code}) before listening:\n${out}`))
    })
  })
}

/** Resolves with the first match of `pattern` in what `gate` printed (now or later); rejects if it exits first. */
export function waitForOutput(gate: GateProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(gate.output())
      if (match === null) return
      gate.child.stdout?.off('data', check)
      gate.child.stderr?.off('data', check)
      resolve(match)
    }
    gate.child.stdout?.on('data', check)
    gate.child.stderr?.on('data', check)
    gate.exited.then(code => reject(new Error(`gate exited (${code}) before printing ${pattern}:\n${gate.output()}`)))
    check()
  })
}

/** Runs `gate <args>` to completion (killed after `timeoutMs`, default 30 s) and returns its exit code and output. */
export function runGate(
  args: string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [GATE_MAIN, ...args], { env: { ...process.env, ...options.env }, cwd: options.cwd })
    track(child)
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => {
      stderr += `\n(killed: still running after ${options.timeoutMs ?? 30_000} ms)`
      child.kill('SIGKILL')
    }, options.timeoutMs ?? 30_000)
    child.stdout.on('data', c => (stdout += c))
    child.stderr.on('data', c => (stderr += c))
    child.on('close', code => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
