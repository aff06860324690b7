// The files an end-to-end test starts `gate` with: the pets spec, an authority seed made by the real
// `gate keygen` (a stable key, so receipts verify across a restart), and a receipt store path.
import type { Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PETS_SPEC_YAML } from './pets-spec.js'
import { runGate } from './spawn-gate.js'

export async function gateFiles(t: Test): Promise<{ dir: string; spec: string; seed: string; db: string }> {
  const dir = t.testdir()
  const spec = join(dir, 'pets.yaml')
  writeFileSync(spec, PETS_SPEC_YAML)
  const seed = join(dir, 'seed')
  t.equal((await runGate(['keygen', seed])).code, 0, 'gate keygen')
  return { dir, spec, seed, db: join(dir, 'receipts.db') }
}
