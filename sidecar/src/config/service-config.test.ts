import t from 'tap'
import { CHECKPOINTER_DEFAULTS } from '../transparency/checkpointer.js'
import { DURABLE_RECEIPTS_MESSAGE } from '../errors.js'
import { LISTENER_TIMEOUT_DEFAULTS } from './listener-timeouts.js'
import { readServiceConfig, SERVICE_DEFAULTS } from './service-config.js'
import { OBSERVABILITY_DEFAULTS } from './observability-flags.js'

// an Ed25519 public key in its wire form (64 lowercase hex)
const ISSUER = 'ab'.repeat(32)

t.test('flags left out get their defaults once, in the resolved config', async t => {
  const config = readServiceConfig({ 'allow-ephemeral-receipts': true }, {})
  t.same(config, {
    global: config.global,
    spec: undefined,
    receiptStore: undefined,
    listen: SERVICE_DEFAULTS.listen,
    timeouts: LISTENER_TIMEOUT_DEFAULTS,
    allowedHosts: [],
    transparency: { enabled: true, everyReceipts: CHECKPOINTER_DEFAULTS.everyReceipts, intervalMs: CHECKPOINTER_DEFAULTS.intervalMs, copyPath: undefined },
    observability: { ...OBSERVABILITY_DEFAULTS, scrapeToken: undefined },
    caseSensitiveRoutes: false,
    denyUnmatched: false,
    trustedIssuers: [],
    strictNonces: false,
    approvalTtlSeconds: 3600,
    nonceTtlSeconds: 60,
    fleet: undefined,
  })
})

t.test('given flags win, under the names the service and kernel take', async t => {
  const config = readServiceConfig(
    {
      'receipt-store': 'r.db',
      listen: 'unix:/tmp/gate.sock',
      'approval-ttl-secs': '90',
      'nonce-ttl-secs': '2',
      'strict-nonces': true,
      'trusted-issuer': [ISSUER],
      'case-sensitive-routes': true,
      'allowed-host': ['Tunnel.Test'],
    },
    {},
  )
  t.match(config, { receiptStore: 'r.db', listen: 'unix:/tmp/gate.sock', approvalTtlSeconds: 90, nonceTtlSeconds: 2, strictNonces: true, trustedIssuers: [ISSUER], caseSensitiveRoutes: true, allowedHosts: ['tunnel.test'] })
  t.equal(readServiceConfig({ 'receipt-db': 'other.db' }, {}).receiptStore, 'other.db', '--receipt-db when --receipt-store is absent')
  const observed = readServiceConfig({ 'receipt-store': 'r.db', 'no-metrics': true, 'log-level': 'warn', 'decision-log-level': 'info' }, { GATE_METRICS_TOKEN: 'scrape-token-0123456789' })
  t.same(observed.observability, { metrics: false, logLevel: 'warn', decisionLevel: 'info', scrapeToken: 'scrape-token-0123456789' })
})

t.test('no durable receipt store is refused first, before the other flags are read', async t => {
  t.throws(() => readServiceConfig({ 'approval-ttl-secs': 'x' }, {}), { code: 'gate_invalid_config', message: DURABLE_RECEIPTS_MESSAGE })
  t.throws(() => readServiceConfig({ 'receipt-store': ':memory:' }, {}), { message: DURABLE_RECEIPTS_MESSAGE }, 'an in-memory path is not durable')
})

t.test('a lifetime that is not a positive integer is refused naming its flag', async t => {
  for (const [flag, value] of [['approval-ttl-secs', '0'], ['nonce-ttl-secs', '1.5'], ['nonce-ttl-secs', 'soon']] as const) {
    t.throws(() => readServiceConfig({ 'allow-ephemeral-receipts': true, [flag]: value }, {}), { code: 'gate_invalid_config', message: `--${flag} must be a positive integer, got "${value}"` })
  }
  t.throws(() => readServiceConfig({ 'allow-ephemeral-receipts': true, listen: 'nowhere' }, {}), { message: /--listen must be HOST:PORT/ })
})
