// The native wire section against the real `gate wire serve` (every check passes), and against the
// broken kernel of testing/broken-wire.ts: it passes without faults, and each check fails against the
// fault it targets. The test also asserts that the faults cover every check.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { findGateCommand } from '../start-sidecar.js'
import { startBrokenWire, type WireFault } from '../testing/broken-wire.js'
import { runWireConformance } from './run-wire.js'
import { WIRE_CHECKS } from './wire-checks.js'

const socketDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gate-wire-conf-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const TARGETS: Record<string, WireFault[]> = {
  'wire.heartbeat': ['wrong-heartbeat'],
  'wire.capability_list': ['list-malformed'],
  'wire.denied_call_receipted': ['allows-calls', 'bad-signature'],
  'wire.refused_combination': ['evaluates-combination'],
  'wire.frames_canonical': ['non-canonical'],
  'wire.split_frames': ['no-reassembly'],
  'wire.message_too_large': ['answers-oversize'],
  'wire.garbage_closed': ['lenient-parse'],
  'wire.wrong_family_closed': ['lenient-parse'],
  'wire.extra_field_closed': ['lenient-parse'],
  'wire.eof_mid_frame': ['delivers-partial'],
}

t.test('every wire check has a fault it fails against', async t => {
  t.same(Object.keys(TARGETS).sort(), WIRE_CHECKS.map(c => c.id).sort())
})

t.test('gate wire serve passes every wire check', async t => {
  const path = join(socketDir(), 'wire.sock')
  const child = spawn(process.execPath, [findGateCommand(), 'wire', 'serve', '--listen', `unix:${path}`, '--allow-ephemeral-receipts', '--tool-server', `fx=${process.execPath} ${FIXTURE_SERVER_PATH}`], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GATE_CONTROL_TOKEN: 'wire-conformance-control-token' } })
  t.teardown(() => child.kill('SIGKILL'))
  let log = ''
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      log += c.toString()
      if (log.includes('wire (gate-wire-v1) listening on')) resolve()
    })
    child.once('exit', code => reject(new Error(`gate wire serve exited ${code}:\n${log}`)))
  })
  const report = await runWireConformance({ target: `unix:${path}` })
  t.same(report.results.filter(r => r.result !== 'PASS').map(r => [r.id, r.detail]), [])
  t.equal(report.ok, true)
})

t.test('the broken kernel without faults passes; each check fails against its fault', async t => {
  const dir = socketDir()
  const clean = await startBrokenWire(join(dir, 'clean.sock'))
  const baseline = await runWireConformance({ target: `unix:${join(dir, 'clean.sock')}` })
  await clean.close()
  t.same(baseline.results.filter(r => r.result !== 'PASS').map(r => [r.id, r.detail]), [], 'baseline passes')
  let n = 0
  for (const [id, faults] of Object.entries(TARGETS)) {
    for (const fault of faults) {
      const path = join(dir, `f${n++}.sock`)
      const broken = await startBrokenWire(path, [fault])
      const report = await runWireConformance({ target: `unix:${path}`, only: [id] })
      await broken.close()
      t.equal(report.results[0]?.result, 'FAIL', `${id} fails against ${fault}: ${report.results[0]?.detail}`)
    }
  }
})
