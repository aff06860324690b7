import t from 'tap'
import { cpuMicros, mainThreadCpuMicros, writtenBytes } from './proc-stats.js'

t.test('readings of this process on Linux; undefined for a process that is not there', { skip: process.platform !== 'linux' && 'not Linux' }, async t => {
  const end = Date.now() + 50
  while (Date.now() < end) Math.sqrt(Math.random())
  t.ok((cpuMicros('/proc/self') ?? 0) > 0, 'process CPU')
  t.ok((mainThreadCpuMicros() ?? 0) > 0, 'main thread CPU')
  t.ok((mainThreadCpuMicros() ?? 0) <= (cpuMicros('/proc/self') ?? 0), 'a thread never exceeds its process')
  t.type(writtenBytes(), 'number')
  t.equal(cpuMicros('/proc/no-such-process'), undefined)
})
