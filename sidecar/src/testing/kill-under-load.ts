// The kill test both `gate sidecar` and `gate api protect` go through: clients keep sending until a
// number of answers were acknowledged, then another process takes the database write lock (a process
// that answered before its commit would keep acknowledging now), then the process is killed with
// SIGKILL. Bounded by the acknowledgement count and a 1.5 s lock window. Test support only.
import type { Test } from 'tap'
import sqlite3 from 'sqlite3'
import { spawnGate, type GateProcess } from './spawn-gate.js'

export interface KillUnderLoadOptions {
  /** Arguments of `gate` (the same for the first start and the restart). */
  args: string[]
  /** Extra environment of the process (both starts). */
  env?: NodeJS.ProcessEnv
  /** Its receipt store. */
  db: string
  /** One request of client `n`: the receipt ids its answer acknowledged, or undefined if none. Throws on a reset. */
  send(url: string, n: number): Promise<string[] | undefined>
  clients: number
  killAfter: number
}

export interface KillUnderLoadResult {
  acknowledged: string[]
  /** Acknowledged while another process held the write lock: 0 for a process that commits before it answers. */
  whileLocked: number
  /** The process started again on the same store, stopped in teardown. */
  restarted: GateProcess
}

/** Loads, locks, kills and restarts; the caller checks the acknowledged ids against the store. */
export async function killUnderLoad(t: Test, options: KillUnderLoadOptions): Promise<KillUnderLoadResult> {
  const gate = await spawnGate(options.args, { env: options.env })
  const acknowledged: string[] = []
  let killed = false
  let resolveKill!: () => void
  const killNow = new Promise<void>(resolve => (resolveKill = resolve))
  const client = async (n: number) => {
    while (!killed) {
      try {
        const ids = await options.send(gate.url, n)
        // ids count as acknowledged only once the whole answer arrived (send resolves after the body)
        if (ids !== undefined) acknowledged.push(...ids)
        if (acknowledged.length >= options.killAfter) resolveKill()
      } catch {
        // connection reset by the kill: this request was never acknowledged
      }
    }
  }
  const clients = Array.from({ length: options.clients }, (_, i) => client(i))
  await killNow
  const blocker = new sqlite3.Database(options.db)
  await new Promise<void>((resolve, reject) => blocker.exec('PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE', err => (err ? reject(err) : resolve())))
  const ackedBeforeLock = acknowledged.length
  await new Promise<void>(resolve => {
    const bound = setTimeout(resolve, 1500) // upper bound only: a correct process acknowledges nothing here
    const poll = setInterval(() => {
      if (acknowledged.length >= ackedBeforeLock + 200) {
        clearTimeout(bound)
        clearInterval(poll)
        resolve()
      }
    }, 20)
    setTimeout(() => clearInterval(poll), 1600)
  })
  gate.child.kill('SIGKILL')
  killed = true
  await gate.exited
  await Promise.all(clients)
  const whileLocked = acknowledged.length - ackedBeforeLock
  await new Promise<void>(resolve => blocker.exec('ROLLBACK', () => blocker.close(() => resolve())))
  const restarted = await spawnGate(options.args, { env: options.env })
  t.teardown(() => restarted.stop('SIGKILL'))
  return { acknowledged, whileLocked, restarted }
}
