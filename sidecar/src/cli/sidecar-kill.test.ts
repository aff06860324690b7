// Kill test: under concurrent load the sidecar is killed with SIGKILL; after a restart every receipt id
// any client received is in the store and verifies. Bounded: stops after a fixed number of receipts.
import t from 'tap'
import { request } from 'undici'
import { ANONYMOUS_CALLER, uuidv7 } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { killUnderLoad } from '../testing/kill-under-load.js'
import { checkStoredReceipts } from '../testing/stored-receipts.js'

t.test('kill -9 under load loses no acknowledged receipt', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const { acknowledged, whileLocked, restarted } = await killUnderLoad(t, {
    args: ['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed],
    db,
    clients: 32,
    killAfter: 1500,
    async send(url, n) {
      const body = JSON.stringify({
        request_id: uuidv7(),
        method: n % 2 === 0 ? 'GET' : 'POST',
        path: n % 3 === 0 ? '/pets' : `/pets/${n}`,
        route_pattern: '/pets',
        caller: { ...ANONYMOUS_CALLER, tenant: `t${n % 4}` },
        timestamp: Math.floor(Date.now() / 1000),
      })
      const res = await request(`${url}/gate/evaluate`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
      const text = await res.body.text()
      return res.statusCode === 200 ? [(JSON.parse(text) as { receipt: { id: string } }).receipt.id] : undefined
    },
  })
  t.ok(acknowledged.length >= 1500, `${acknowledged.length} receipts acknowledged before the kill`)
  t.comment(`${whileLocked} acknowledged while the write lock was held`)
  const live = (await (await request(`${restarted.url}/gate/live`)).body.json()) as { kernel_key: string }
  const { missing, invalid } = await checkStoredReceipts(db, acknowledged, live.kernel_key)
  t.same(missing, [], 'every acknowledged receipt is stored')
  t.same(invalid, [], 'every stored receipt verifies with the restarted sidecar key')
  // a durable store is written by the receipt writer thread, on either driver
  t.match(restarted.output(), /receipts: durable \(sqlite .+ \((?:sqlite3|node:sqlite), signed and committed on the receipt writer thread\)\)/)
})
