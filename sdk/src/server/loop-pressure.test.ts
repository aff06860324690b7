import t from 'tap'
import { createLoopPressure } from './loop-pressure.js'

function spin(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // hold the event loop
  }
}

t.test('saturated while the loop is kept busy', async t => {
  const saturated = createLoopPressure({ windowMs: 50, threshold: 0.85 })
  t.equal(saturated(), false, 'fresh: not saturated')
  // busy for several windows, yielding briefly between slices (as a loaded server does)
  for (let i = 0; i < 12; i++) {
    spin(20)
    await new Promise(resolve => setImmediate(resolve))
    saturated()
  }
  t.equal(saturated(), true, 'busy loop: saturated')
})

t.test('measured per window: busy over the threshold, idle under it, unchanged within a window', async t => {
  let clock = 0
  const loop = { idle: 0, active: 0 }
  const pass = (ms: number, busyShare: number) => {
    clock += ms
    loop.active += ms * busyShare
    loop.idle += ms * (1 - busyShare)
  }
  const saturated = createLoopPressure({ windowMs: 100, threshold: 0.7, readLoop: () => ({ ...loop }), now: () => clock })
  pass(100, 0.9)
  t.equal(saturated(), true, '90% busy over a window')
  pass(50, 0)
  t.equal(saturated(), true, 'half a window later the last answer stands')
  pass(50, 0)
  t.equal(saturated(), false, 'a window at 45% busy')
  pass(100, 0.7)
  t.equal(saturated(), true, 'exactly at the threshold counts as saturated')
  pass(100, 0.69)
  t.equal(saturated(), false)
})
