// Starts the real `gate` command (sidecar/dist/cli/main.js of this repository) as a child process and
// waits for its "listening on URL" line, never a sleep. Used by the end-to-end test only; the suite
// itself never starts anything but its own loopback fakes. Test support only.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The gate CLI of this repository, built. */
export const GATE_MAIN = fileURLToPath(new URL('../../../sidecar/dist/cli/main.js', import.meta.url))

export interface GateProcess {
  url: string
  output(): string
  stop(): Promise<void>
}

/** Whether the gate CLI is built. */
export function isGateBuilt(): boolean {
  return existsSync(GATE_MAIN)
}

/** Runs `gate <args>` to completion (for `--help` probes). */
export function runGate(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [GATE_MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', c => (output += c))
    child.stderr.on('data', c => (output += c))
    child.on('close', code => resolve({ code, output }))
  })
}

/** Spawns `gate <args>`; resolves once it listens, rejects with its output if it exits or stalls first. */
export function spawnGate(args: string[], env: Record<string, string> = {}, readyTimeoutMs = 60_000): Promise<GateProcess> {
  const child: ChildProcess = spawn(process.execPath, [GATE_MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`gate ${args.join(' ')} did not start within ${readyTimeoutMs} ms:\n${out}`))
    }, readyTimeoutMs)
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m === null) return
      clearTimeout(timer)
      resolve({
        url: m[1]!,
        output: () => out,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
          await exited
        },
      })
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`gate ${args.join(' ')} exited before listening:\n${out}`))
    })
  })
}
