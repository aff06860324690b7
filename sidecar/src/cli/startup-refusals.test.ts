// A start that cannot go ahead refuses before it creates anything, exits non-zero and names the way
// out: a control token that breaks the token rule (gate sidecar, gate api protect).
import t from 'tap'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'
import { runGate } from '../testing/spawn-gate.js'

const COMMANDS: [string, (dir: string) => string[]][] = [
  ['gate sidecar', dir => ['sidecar', '--receipt-store', join(dir, 'receipts.db')]],
  ['gate api protect', dir => ['api', 'protect', '--upstream', 'http://127.0.0.1:9', '--spec', join(dir, 'pets.yaml'), '--receipt-store', join(dir, 'receipts.db')]],
]

for (const [name, args] of COMMANDS) {
  t.test(`${name} refuses a control token shorter than 16 characters, naming the rule`, async t => {
    const dir = t.testdir({ 'pets.yaml': PETS_SPEC_YAML })
    const r = await runGate([...args(dir), '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: 'change-me' } })
    t.equal(r.code, 1, r.stderr)
    t.match(r.stderr, 'the control token (GATE_CONTROL_TOKEN or --control-token) must be at least 16 characters without whitespace')
    t.notMatch(r.stderr + r.stdout, 'change-me', 'the token is never echoed')
    t.same(readdirSync(dir), ['pets.yaml'])
  })
}
