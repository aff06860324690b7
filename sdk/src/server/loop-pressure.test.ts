import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { createLoopPressure } from './loop-pressure.js'

function spin(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // hold the event loop
  }
}

t.test('saturated while the loop is kept busy, not while it idles', async t => {
  const saturated = createLoopPressure({ windowMs: 50, threshold: 0.85 })
  t.equal(saturated(), false, 'fresh: not saturated')
  // busy for several windows, yielding briefly between slices (as a loaded server does)
  for (let i = 0; i < 12; i++) {
    spin(20)
    await new Promise(resolve => setImmediate(resolve))
    saturated()
  }
  t.equal(saturated(), true, 'busy loop: saturated')
  await sleep(120)
  t.equal(saturated(), false, 'after idling for more than a window: not saturated')
})
