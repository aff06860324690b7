// The processes of the SDK benchmarks: `gate sidecar` (this tree's, or an older checkout's), the floor
// server, and the overhead apps, each its own process on loopback or a Unix socket in a temp dir.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A started child that said where it listens. */
export interface Listening {
  url: string
  pid: number
  child: ChildProcess
  stop(): Promise<void>
}

/** Spawns `node args` and resolves once it prints `listening on URL` (http:// or unix:). */
export function startListening(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Listening> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    const onData = (c: Buffer) => {
      out += c.toString('utf8')
      const m = /listening on ((?:http:\/\/|unix:)\S+)/.exec(out)
      if (m === null) return
      child.stdout!.off('data', onData)
      // keep draining: a full pipe would block the child
      child.stdout!.resume()
      resolve({ url: m[1] as string, pid: child.pid as number, child, stop: () => stopChild(child) })
    }
    child.stdout!.on('data', onData)
    child.once('exit', code => reject(new Error(`${args.join(' ')} exited ${code}:\n${out}`)))
  })
}

/** The pets spec (GET /pets is a session-scoped allow) written to `dir`. */
export function writeSpec(dir: string, yaml: string): string {
  const path = join(dir, 'pets.yaml')
  writeFileSync(path, yaml)
  return path
}

/** `gate sidecar` from `root` (a built checkout) on `listen`, with a durable store in `dir`. */
export function startSidecar(root: string, listen: string, dir: string, spec: string, name: string): Promise<Listening> {
  const main = join(root, 'sidecar/dist/cli/main.js')
  return startListening([main, 'sidecar', '--listen', listen, '--spec', spec, '--receipt-store', join(dir, `${name}.db`)], { GATE_CONTROL_TOKEN: '', GATE_SIDECAR_URL: '' })
}

/** One overhead app (overhead-app.ts of `root`): its URL, and its CPU and requests served so far. */
export interface OverheadApp {
  url: string
  pid: number
  stats(): Promise<{ cpuMicros: number; served: number }>
  stop(): Promise<void>
}

/** Starts `root`'s bench/dist/sdk/overhead-app.js with `args` (framework, mode, URL, ...). */
export async function startOverheadApp(root: string, args: string[]): Promise<OverheadApp> {
  const script = join(root, 'bench/dist/sdk/overhead-app.js')
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  let waiting: ((line: string) => void) | undefined
  let onListening: ((port: string) => void) | undefined
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8')
    const listening = /listening (\d+)\n/.exec(out)
    if (listening !== null && onListening !== undefined) {
      out = out.slice((listening.index ?? 0) + listening[0].length)
      onListening(listening[1] as string)
      onListening = undefined
    }
    const m = /stats (\d+) (\d+)\n/.exec(out)
    if (m !== null && waiting !== undefined) {
      out = out.slice((m.index ?? 0) + m[0].length)
      const resolve = waiting
      waiting = undefined
      resolve(m[0])
    }
  })
  const port = await new Promise<string>((resolve, reject) => {
    onListening = resolve
    child.once('exit', code => reject(new Error(`overhead-app ${args.join(' ')} exited with ${code}`)))
  })
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    async stats() {
      const line = await new Promise<string>(resolve => {
        waiting = resolve
        child.kill('SIGUSR2')
      })
      const [, cpu, served] = line.trim().split(' ')
      return { cpuMicros: Number(cpu), served: Number(served) }
    },
    stop: () => stopChild(child),
  }
}

/** This checkout's root (bench/dist/sdk → ../../..). */
export const THIS_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}
