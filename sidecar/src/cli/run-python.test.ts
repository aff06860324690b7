// The wire is language-neutral: the Python client printed in docs/wire.md (standard library only) runs
// as the agent of the real `gate run`, and gets its heartbeat, its tool result and a signed receipt.
// Skipped when python3 is not installed.
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { canonicalJson, createSigner, signCapability } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { GATE_MAIN } from '../testing/spawn-gate.js'
import { FIXTURE_TOOL_SERVER } from '../testing/wire-run.js'

const DOC = fileURLToPath(new URL('../../../docs/wire.md', import.meta.url))
const hasPython = spawnSync('python3', ['--version']).status === 0

t.test('the Python client of docs/wire.md calls a tool through gate run', { skip: hasPython ? false : 'python3 is not installed' }, async t => {
  const block = /```python\n([\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'))
  t.ok(block, 'docs/wire.md has a python block')
  const files = await gateFiles(t)
  const client = join(files.dir, 'client.py')
  writeFileSync(client, block![1]!)
  const authority = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') })
  const now = Math.floor(Date.now() / 1000)
  const token = signCapability({ schema: 'gate.capability.v1', id: 'cap-python', subject: 'ab'.repeat(32), scope: { grants: [{ server_id: 'fx', tool_name: 'echo' }] }, issued_at: now - 10, expires_at: now + 3600 }, authority)
  const tokenFile = join(files.dir, 'capability.json')
  writeFileSync(tokenFile, `${canonicalJson(token)}\n`)
  const child = spawn(process.execPath, [GATE_MAIN, 'run', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--tool-server', FIXTURE_TOOL_SERVER, '--', 'python3', client, tokenFile, 'fx', 'echo', '{"text":"from python"}'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GATE_CONTROL_TOKEN: 'wire-python-test-control-token' } })
  t.teardown(() => child.kill('SIGKILL'))
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', c => (stdout += c))
  child.stderr.on('data', c => (stderr += c))
  const code = await new Promise(resolve => child.once('exit', resolve))
  t.equal(code, 0, stderr)
  const lines = stdout.trim().split('\n')
  t.equal(lines[0], 'heartbeat: heartbeat')
  t.equal(lines[1], 'result: {"status":"ok","value":{"content":[{"text":"echo: from python","type":"text"}]}}')
  t.match(lines[2], /^receipt: [0-9a-f]{64} allow$/)
})
