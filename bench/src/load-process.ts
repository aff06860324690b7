// Closed-loop load from a process of its own (autocannon), for measurements whose server runs inside the
// bench process, where autocannon would share its event loop: `node load-process.js URL SECONDS
// CONNECTIONS METHOD [BODY] [HEADERS_JSON]` prints the result as one JSON line. Loopback only.
import { runLoad } from './load.js'

const [url, seconds = '5', connections = '50', method = 'GET', body = '', headers = '{}'] = process.argv.slice(2)
if (url === undefined) throw new Error('usage: load-process URL SECONDS CONNECTIONS METHOD [BODY] [HEADERS_JSON]')
const result = await runLoad({ url, durationSeconds: Number(seconds), connections: Number(connections), method: method as 'GET' | 'POST', body: body === '' ? undefined : body, headers: JSON.parse(headers) as Record<string, string> })
process.stdout.write(`${JSON.stringify(result)}\n`)
