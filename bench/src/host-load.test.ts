import t from 'tap'
import { describeHostLoad, parseCpuLine, readCpuTimes } from './host-load.js'

t.test('parseCpuLine reads idle + iowait, steal and the total of the first eight fields', async t => {
  t.same(parseCpuLine('cpu  100 0 50 800 20 0 10 20 5 0'), { idle: 820, steal: 20, total: 1000 })
  t.equal(parseCpuLine('cpu0 1 2 3 4 5 6 7 8'), undefined, 'a per-core line is not the aggregate')
  t.equal(parseCpuLine('cpu 1 2 3'), undefined, 'too few fields')
  t.equal(parseCpuLine('cpu 1 2 x 4 5 6 7 8'), undefined, 'not a number')
  t.equal(parseCpuLine(undefined), undefined)
})

t.test('describeHostLoad splits the interval into busy, stolen and idle', async t => {
  const before = { idle: 800, steal: 100, total: 2000 }
  const after = { idle: 1300, steal: 300, total: 3000 }
  t.equal(describeHostLoad(before, after, 2), 'host during this suite: 2 cores, busy 30%, stolen by the hypervisor 20%, idle 50%')
  t.equal(describeHostLoad(before, before, 2), undefined, 'no time passed')
  t.equal(describeHostLoad(undefined, after, 2), undefined)
})

t.test('readCpuTimes reads this host on Linux', { skip: process.platform !== 'linux' && 'not Linux' }, async t => {
  const times = readCpuTimes()
  t.ok(times !== undefined && times.total > 0)
})
