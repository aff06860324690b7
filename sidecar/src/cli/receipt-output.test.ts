// What the receipt commands print, against receipts a real `gate sidecar` signed (issue 24, items 8 and 9).
// Item 8: `gate receipt explain` printed raw ESC and newlines from a token's `schema` (it reached the
// deny reason; a token gate.capability.v1 rejects no longer echoes it) or from a request's path (an
// unmatched path is its receipt's route_pattern), so a request could drive the operator's terminal
// and forge output lines. Item 9:
// `gate receipt verify` printed "ok" and exited 0 for a receipt an attacker signed with a key of their
// own when no --trusted-key was given.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ANONYMOUS_CALLER, createSigner, generateSecret, signHttpReceiptJson, uuidv7 } from '@gate/sdk'
import { exampleReceiptBody } from '@gate/sdk/testing'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'

const TOKEN = 'receipt-output-control-token-0123456789'
// ESC [ 2 J clears the screen; CSI as one C1 byte; a newline forging a line; a bidi override
const HOSTILE = '\u001b[2J\u009b31m\nverdict:     allow\u202e'

t.test('explain and list print terminal controls from a receipt as escapes', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const token = { schema: `gate.capability.v1${HOSTILE}`, id: 'cap\u001b]52;c;cHduZWQ=\u0007', subject: 'x', issuer: 'y', scope: { grants: [] }, issued_at: 1, expires_at: 2, signature: 'ab' }
  const evaluated = await call(`${gate.url}/gate/evaluate`, {
    body: { request_id: uuidv7(), method: 'POST', path: `/pets/x${HOSTILE}`, route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) },
    headers: { 'x-gate-capability': Buffer.from(JSON.stringify(token)).toString('base64url') },
  })
  const receipt = (evaluated.body as { receipt: { id: string; route_pattern: string } }).receipt
  t.match(receipt.route_pattern, '\u001b[2J', 'the hostile text is in the signed receipt')

  const explained = await runGate(['receipt', 'explain', receipt.id, '--receipt-db', db])
  t.equal(explained.code, 0, explained.stderr)
  t.notMatch(explained.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/, 'no control character reaches the terminal')
  t.match(explained.stdout, '\\u001b[2J\\u009b31m\\nverdict:     allow\\u202e', 'it is shown escaped')
  t.equal(explained.stdout.split('\n').filter(line => line.startsWith('  verdict:')).length, 1, 'no forged verdict line')

  const listed = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all'])
  t.equal(listed.code, 0, listed.stderr)
  t.notMatch(listed.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/)
  const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : typeof v === 'object' && v !== null ? Object.values(v).flatMap(strings) : [])
  const printed = listed.stdout.trim().split('\n').flatMap(line => strings(JSON.parse(line)))
  t.ok(printed.some(s => s.includes('\u001b[2J\u009b31m')), 'the escapes decode to the same JSON value')
})

t.test('verify without --trusted-key: UNTRUSTED and exit 1 for a self-signed receipt, unless --allow-untrusted', async t => {
  const dir = t.testdir()
  const attacker = createSigner({ secret: generateSecret() })
  const { json } = signHttpReceiptJson(exampleReceiptBody({ request_id: `forged\u001b[2J${uuidv7()}` }), attacker)
  const file = join(dir, 'forged.json')
  writeFileSync(file, json)
  const plain = await runGate(['receipt', 'verify', file])
  t.equal(plain.code, 1, 'a script checking the exit code is not fooled')
  t.match(plain.stdout, /^UNTRUSTED [0-9a-f]{64} \(http receipt, signature valid, signer untrusted\)\n$/)
  t.match(plain.stderr, /give --trusted-key KEY \(or --allow-untrusted to accept any signer\)/)
  const allowed = await runGate(['receipt', 'verify', file, '--allow-untrusted'])
  t.equal(allowed.code, 0, 'accepting any signer is an explicit choice')
  t.match(allowed.stdout, /^ok [0-9a-f]{64} \(http receipt, signature valid, signer untrusted\)/)
  const trusted = await runGate(['receipt', 'verify', file, '--trusted-key', attacker.publicKey])
  t.equal(trusted.code, 0, 'the key named as trusted verifies')
  const other = await runGate(['receipt', 'verify', file, '--trusted-key', createSigner({ secret: generateSecret() }).publicKey])
  t.equal(other.code, 1)
  t.equal((await runGate(['receipt', 'verify', file, '--allow-untrusted', '--trusted-key', attacker.publicKey])).code, 2, 'both flags: usage error')
})
