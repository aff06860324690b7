import t from 'tap'
import { cpuBoundRate, formatMicros, median, medianIfAll } from './measure.js'

t.test('median of odd and even counts', async t => {
  t.equal(median([3, 1, 2]), 2)
  t.equal(median([4, 1, 3, 2]), 2.5)
})

t.test('cpuBoundRate: all cores, or the main thread when it is the tighter limit', async t => {
  // 150 µs in all per request on 2 cores: 2e6 / 150 ≈ 13,333/s; a main thread at 50 µs allows 20,000/s
  t.equal(Math.round(cpuBoundRate({ server: 125, main: 50, load: 25 }, 2)!), 13333)
  // the same process with its main thread at 100 µs: the thread allows only 10,000/s
  t.equal(cpuBoundRate({ server: 125, main: 100, load: 25 }, 2), 10_000)
  // main thread unknown: the cores alone
  t.equal(cpuBoundRate({ server: 75, load: 25 }, 1), 10_000)
  // no server reading: no bound
  t.equal(cpuBoundRate({ load: 25 }, 2), undefined)
})

t.test('medianIfAll: a median only when every reading is there', async t => {
  t.equal(medianIfAll([5, 1, 3]), 3)
  t.equal(medianIfAll([5, undefined, 3]), undefined)
})

t.test('formatMicros: whole microseconds, empty where there is no reading', async t => {
  t.equal(formatMicros(98.96), '99')
  t.equal(formatMicros(387.2), '387')
  t.equal(formatMicros(undefined), '')
})
