// Diagnostic row of the proxy benchmark: the @gate/proxy forwarding path (request checks, identity,
// body hash, header rules, undici relay) with an evaluator that allows everything and signs nothing.
// Its distance to @fastify/http-proxy is the proxy layer's own cost; its distance to the real
// `gate api protect` row is the kernel's (two signed, stored receipts per request).
// argv[2] is the upstream URL. Prints `listening PORT` once bound to 127.0.0.1.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createProxy, type ProxyEvaluation, type ProxyEvaluator } from '@gate/proxy'
import type { HttpReceipt } from '@gate/sdk'

const upstream = process.argv[2]
if (upstream === undefined) throw new Error('usage: noop-proxy UPSTREAM_URL')
const receipt = { id: '0'.repeat(64) } as HttpReceipt
const evaluation: ProxyEvaluation = { verdict: { verdict: 'allow' }, receipt, status: 200, responseJson: '{}' }
const evaluator: ProxyEvaluator = {
  matchRoute: (_method, path) => ({ pattern: path }),
  evaluate: async () => evaluation,
  finalize: async () => ({ receipt, json: '{}' }),
}
const proxy = createProxy(evaluator, { upstream })
const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => void proxy.handle(req, res))
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
