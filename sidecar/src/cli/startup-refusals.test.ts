// A start that cannot go ahead refuses before it creates anything, exits non-zero and names the way
// out: a --listen port another process holds (gate sidecar, gate api protect, gate trust serve), and a
// control token that breaks the token rule (gate sidecar, gate api protect).
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { readdirSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'
import { runGate } from '../testing/spawn-gate.js'

const TOKEN = 'startup-refusals-control-token'

/** A port held by another process's listener for the rest of the test. */
async function busyPort(t: Test): Promise<number> {
  const holder = createServer()
  holder.listen(0, '127.0.0.1')
  await once(holder, 'listening')
  t.teardown(() => new Promise<void>(resolve => holder.close(() => resolve())))
  return (holder.address() as AddressInfo).port
}

const COMMANDS: [string, (dir: string) => string[]][] = [
  ['gate sidecar', dir => ['sidecar', '--receipt-store', join(dir, 'receipts.db')]],
  ['gate api protect', dir => ['api', 'protect', '--upstream', 'http://127.0.0.1:9', '--spec', join(dir, 'pets.yaml'), '--receipt-store', join(dir, 'receipts.db')]],
  ['gate trust serve', dir => ['trust', 'serve', '--receipt-db', join(dir, 'receipts.db')]],
]

for (const [name, args] of COMMANDS) {
  t.test(`${name} on a port in use exits 1 naming --listen, and creates no store file`, async t => {
    const dir = t.testdir({ 'pets.yaml': PETS_SPEC_YAML })
    const port = await busyPort(t)
    const r = await runGate([...args(dir), '--listen', `127.0.0.1:${port}`], { env: { GATE_CONTROL_TOKEN: TOKEN } })
    t.equal(r.code, 1, r.stderr)
    t.match(r.stderr, `cannot listen on 127.0.0.1:${port} (EADDRINUSE`)
    t.match(r.stderr, '--listen HOST:PORT')
    t.same(readdirSync(dir), ['pets.yaml'], 'nothing was created beside the spec')
  })
}

for (const [name, args] of COMMANDS.slice(0, 2)) {
  t.test(`${name} refuses a control token shorter than 16 characters, naming the rule`, async t => {
    const dir = t.testdir({ 'pets.yaml': PETS_SPEC_YAML })
    const r = await runGate([...args(dir), '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: 'change-me' } })
    t.equal(r.code, 1, r.stderr)
    t.match(r.stderr, /GATE_CONTROL_TOKEN.* at least 16 characters/)
    t.notMatch(r.stderr + r.stdout, 'change-me', 'the token is never echoed')
    t.same(readdirSync(dir), ['pets.yaml'])
  })
}
