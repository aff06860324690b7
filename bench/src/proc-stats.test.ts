import t from 'tap'
import { spawn } from 'node:child_process'
import { cpuMicros, cpuPerRequestDuring, cpuPerRequestUntilQuiet, mainThreadCpuMicros, waitUntilQuiet, writtenBytes } from './proc-stats.js'

t.test('readings of this process on Linux; undefined for a process that is not there', { skip: process.platform !== 'linux' && 'not Linux' }, async t => {
  const end = Date.now() + 50
  while (Date.now() < end) Math.sqrt(Math.random())
  t.ok((cpuMicros('/proc/self') ?? 0) > 0, 'process CPU')
  t.ok((mainThreadCpuMicros() ?? 0) > 0, 'main thread CPU')
  t.ok((mainThreadCpuMicros() ?? 0) <= (cpuMicros('/proc/self') ?? 0), 'a thread never exceeds its process')
  t.type(writtenBytes(), 'number')
  t.equal(cpuMicros('/proc/no-such-process'), undefined)
})

t.test('waitUntilQuiet waits out a busy process, and gives up at its timeout', { skip: process.platform !== 'linux' && 'not Linux' }, async t => {
  // a child that spins for 600 ms, then idles until killed
  const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 600; while (Date.now() < end); setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  t.teardown(() => child.kill())
  await new Promise(resolve => setTimeout(resolve, 100))
  const busy = await waitUntilQuiet([child.pid!], { windowMs: 100, timeoutMs: 150 })
  t.equal(busy.quiet, false, 'still spinning at the timeout')
  const settled = await waitUntilQuiet([child.pid!], { windowMs: 100, timeoutMs: 5000 })
  t.equal(settled.quiet, true, 'quiet once the spinning stopped')
  t.ok(settled.waitedMs >= 100, 'it sampled at least one window')
  t.same((await waitUntilQuiet([999_999_999], { windowMs: 20 })).quiet, true, 'a process that is gone counts as idle')
})

t.test('waitUntilQuiet needs quiet for quietForMs: a lull before background work starts does not count', { skip: process.platform !== 'linux' && 'not Linux' }, async t => {
  // like a Gate after a row: idle for 400 ms (its backfill's gather delay), then busy for 800 ms
  const child = spawn(process.execPath, ['-e', 'process.stdout.write("ready\\n"); setTimeout(() => { const end = Date.now() + 800; while (Date.now() < end); }, 400); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'] })
  t.teardown(() => child.kill())
  await new Promise(resolve => child.stdout!.once('data', resolve))
  const fooled = await waitUntilQuiet([child.pid!], { windowMs: 100, quietForMs: 100 })
  t.ok(fooled.quiet && fooled.waitedMs < 400, `one quiet window is taken in the lull (${fooled.waitedMs.toFixed(0)} ms)`)
  const settled = await waitUntilQuiet([child.pid!], { windowMs: 100, quietForMs: 1000, timeoutMs: 10_000 })
  t.equal(settled.quiet, true)
  // from here: the rest of the lull, the 800 ms of work, then 1000 ms of quiet
  t.ok(settled.waitedMs >= 1000 + 700, `it waited out the work and then the quiet span (${settled.waitedMs.toFixed(0)} ms)`)
})

t.test('cpuPerRequestDuring divides the CPU spent during a load by its requests', { skip: process.platform !== 'linux' && 'not Linux' }, async t => {
  // this process serves and loads at once: 10 "requests" of ~60 ms of spinning
  const { result, cpu } = await cpuPerRequestDuring(process.pid, async () => {
    const end = Date.now() + 60
    while (Date.now() < end) Math.sqrt(Math.random())
    return 10
  }, n => n)
  t.equal(result, 10)
  t.ok(cpu.load > 0, 'the load generator (this process) spent CPU')
  t.type(cpu.server, 'number')
  t.type(cpu.main, 'number')
  t.same((await cpuPerRequestDuring(undefined, async () => 1, n => n)).cpu.server, undefined, 'no pid: no server reading')
})

t.test('cpuPerRequestUntilQuiet charges the work a process does after its load to the requests it served', { skip: process.platform !== 'linux' && 'not Linux' }, async t => {
  // like a Gate after a row: a short lull, then 300 ms of background work, then idle. The work is 300 ms
  // of the child's own CPU time, not of the clock: on a busy host a clock-timed loop gets a fraction of it.
  const work = 'const start = process.cpuUsage(); for (let u = process.cpuUsage(start); u.user + u.system < 300_000; u = process.cpuUsage(start));'
  const child = spawn(process.execPath, ['-e', `process.stdout.write("ready\\n"); setTimeout(() => { ${work} }, 200); setInterval(() => {}, 1000)`], { stdio: ['ignore', 'pipe', 'ignore'] })
  t.teardown(() => child.kill())
  await new Promise(resolve => child.stdout!.once('data', resolve))
  const perRequest = await cpuPerRequestUntilQuiet(child.pid!, [child.pid!], 100, { windowMs: 100, quietForMs: 500, timeoutMs: 10_000 })
  // at most 300 ms of CPU over 100 requests, ~3,000 µs each; /proc counts in 10 ms ticks
  t.ok(perRequest !== undefined && perRequest >= 1000 && perRequest <= 4000, `up to ~3,000 µs per request (at least a third of it, should the host starve it) (${perRequest})`)
  t.equal(await cpuPerRequestUntilQuiet(undefined, [], 100, { windowMs: 20, quietForMs: 20 }), undefined, 'no pid: no reading')
})
