// The kill test both `gate sidecar` and `gate api protect` go through: clients keep sending until a
// number of answers were acknowledged, then another process takes the database write lock (a process
// that answered before its commit would keep acknowledging now), then the process is killed with
// SIGKILL. Bounded by the acknowledgement count and a 1.5 s lock window. Test support only.
import type { Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import sqlite3 from 'sqlite3'
import { verifyHttpReceipt, type HttpReceipt } from '@gate/sdk'
import { openReceiptStore } from '../stores/index.js'
import { PETS_SPEC_YAML } from './pets-spec.js'
import { runGate, spawnGate, type GateProcess } from './spawn-gate.js'

/** The files a kill test starts from: the pets spec, an authority seed (stable key across the restart) and a store path. */
export async function killFixture(t: Test): Promise<{ spec: string; seed: string; db: string }> {
  const dir = t.testdir()
  const spec = join(dir, 'pets.yaml')
  writeFileSync(spec, PETS_SPEC_YAML)
  const seed = join(dir, 'seed')
  t.equal((await runGate(['keygen', seed])).code, 0, 'gate keygen')
  return { spec, seed, db: join(dir, 'receipts.db') }
}

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

/** Every id's stored receipt, verified against `kernelKey`: the ids not stored, and those that do not verify. */
export async function checkStoredReceipts(db: string, ids: readonly string[], kernelKey: string): Promise<{ missing: string[]; invalid: string[]; receipts: Map<string, HttpReceipt> }> {
  const store = await openReceiptStore(db)
  try {
    const missing: string[] = []
    const invalid: string[] = []
    const receipts = new Map<string, HttpReceipt>()
    for (const id of ids) {
      const row = await store.getById(id)
      if (row === undefined) {
        missing.push(id)
        continue
      }
      const receipt = JSON.parse(row.httpJson) as HttpReceipt
      receipts.set(id, receipt)
      if (!verifyHttpReceipt(receipt, { trustedKeys: [kernelKey] }).ok) invalid.push(id)
    }
    return { missing, invalid, receipts }
  } finally {
    await store.close()
  }
}
