// Kill test: under concurrent load the sidecar is killed with SIGKILL; after a restart every receipt id
// any client received is in the store and verifies. Bounded: stops after a fixed number of receipts.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import { ANONYMOUS_CALLER, uuidv7, verifyHttpReceipt } from '@gate/sdk'
import sqlite3 from 'sqlite3'
import { openReceiptStore } from '../stores/index.js'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'
import { runGate, spawnGate } from '../testing/spawn-gate.js'

const CLIENTS = 32
const KILL_AFTER = 1500

t.test('kill -9 under load loses no acknowledged receipt', async t => {
  const dir = t.testdir()
  const spec = join(dir, 'pets.yaml')
  writeFileSync(spec, PETS_SPEC_YAML)
  const seed = join(dir, 'seed')
  t.equal((await runGate(['keygen', seed])).code, 0)
  const db = join(dir, 'receipts.db')
  const args = ['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed]
  const gate = await spawnGate(args)
  const acknowledged: string[] = []
  let killed = false
  let resolveKill!: () => void
  const killNow = new Promise<void>(resolve => (resolveKill = resolve))

  const client = async (n: number) => {
    while (!killed) {
      const body = JSON.stringify({
        request_id: uuidv7(),
        method: n % 2 === 0 ? 'GET' : 'POST',
        path: n % 3 === 0 ? '/pets' : `/pets/${n}`,
        route_pattern: '/pets',
        caller: { ...ANONYMOUS_CALLER, tenant: `t${n % 4}` },
        timestamp: Math.floor(Date.now() / 1000),
      })
      try {
        const res = await request(`${gate.url}/gate/evaluate`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
        const text = await res.body.text()
        if (res.statusCode === 200) {
          // the id counts as acknowledged only once the whole answer arrived
          acknowledged.push((JSON.parse(text) as { receipt: { id: string } }).receipt.id)
          if (acknowledged.length >= KILL_AFTER) resolveKill()
        }
      } catch {
        // connection reset by the kill: this request was never acknowledged
      }
    }
  }
  const clients = Array.from({ length: CLIENTS }, (_, i) => client(i))
  await killNow
  // Hold the database write lock from another process while the clients keep going: a sidecar that
  // answered before its commit would keep acknowledging now, and those receipts would die with it.
  const blocker = new sqlite3.Database(db)
  await new Promise<void>((resolve, reject) => blocker.exec('PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE', err => (err ? reject(err) : resolve())))
  const ackedBeforeLock = acknowledged.length
  await new Promise<void>(resolve => {
    const bound = setTimeout(resolve, 1500) // upper bound only: a correct sidecar acknowledges nothing here
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
  t.ok(acknowledged.length >= KILL_AFTER, `${acknowledged.length} receipts acknowledged before the kill`)
  t.comment(`${acknowledged.length - ackedBeforeLock} acknowledged while the write lock was held`)
  await new Promise<void>(resolve => blocker.exec('ROLLBACK', () => blocker.close(() => resolve())))

  const again = await spawnGate(args)
  t.teardown(() => again.stop('SIGKILL'))
  const live = (await (await request(`${again.url}/gate/live`)).body.json()) as { kernel_key: string }
  const store = await openReceiptStore(db)
  t.teardown(() => store.close())
  let missing = 0
  let invalid = 0
  for (const id of acknowledged) {
    const row = await store.getById(id)
    if (row === undefined) {
      missing++
      continue
    }
    if (!verifyHttpReceipt(JSON.parse(row.httpJson), { trustedKeys: [live.kernel_key] }).ok) invalid++
  }
  t.equal(missing, 0, 'every acknowledged receipt is stored')
  t.equal(invalid, 0, 'every stored receipt verifies with the restarted sidecar key')
})
