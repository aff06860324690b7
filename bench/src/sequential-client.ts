// A client that sends one request at a time over one keep-alive connection, run as its own process so
// its CPU is not charged to the server it measures: `node sequential-client.js URL N GAP_MS METHOD
// BODY_FILE [HEADERS_JSON]`. It sends N requests, each GAP_MS after the previous answer (0: at once), and
// prints `latency P50 P90 P99` (ms) once done; the caller warms the server up with a run of its own.
// Loopback only.
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'

const [url, n = '1000', gap = '1', method = 'POST', bodyFile, headersJson = '{}'] = process.argv.slice(2)
if (url === undefined) throw new Error('usage: sequential-client URL N GAP_MS METHOD BODY_FILE [HEADERS_JSON]')
const target = new URL(url)
if (target.hostname !== '127.0.0.1') throw new Error(`benchmarks only load loopback, not ${target.hostname}`)
const body = bodyFile === undefined || bodyFile === '-' ? undefined : readFileSync(bodyFile)
const headers: Record<string, string | number> = { ...(JSON.parse(headersJson) as Record<string, string>) }
if (body !== undefined) headers['content-length'] = body.length
const agent = new Agent({ keepAlive: true, maxSockets: 1 })

function once(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method, agent, headers }, res => {
      res.resume()
      res.on('end', () => (res.statusCode !== undefined && res.statusCode < 400 ? resolve(res.statusCode) : reject(new Error(`status ${res.statusCode}`))))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const count = Number(n)
const pause = Number(gap)
const latencies: number[] = []
for (let i = 0; i < count; i++) {
  const started = performance.now()
  await once()
  latencies.push(performance.now() - started)
  if (pause > 0) await new Promise(resolve => setTimeout(resolve, pause))
}
latencies.sort((a, b) => a - b)
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(3)
process.stdout.write(`latency ${at(0.5)} ${at(0.9)} ${at(0.99)}\n`)
agent.destroy()
