// createTrustServer's options are checked before anything starts: every refusal names the option, what
// was expected and what arrived (never a token or a seed), and the defaults are applied once.
import t from 'tap'
import type { TrustServerHost } from './host-ports.js'
import { CLUSTER_SYNC_INTERVAL_MS, resolveTrustOptions, type TrustOptions } from './trust-server-options.js'

const refuse = () => Promise.reject(new Error('not started in this test'))
const host: TrustServerHost = { checkListen: refuse, serve: refuse, openSqliteStores: refuse, startReceipts: refuse, metrics: undefined, log: () => undefined }
const base: TrustOptions = { store: { kind: 'sqlite', receiptDb: '/x/receipts.db' }, serviceToken: 'service-token-0123456789', host }

t.test('the defaults are applied once, and the result is frozen', async t => {
  const resolved = resolveTrustOptions(base)
  t.match(resolved, { tenantTokens: new Map(), authoritySeed: undefined, cluster: { syncIntervalMs: CLUSTER_SYNC_INTERVAL_MS, peers: [], discoverPeers: false } })
  t.ok(Object.isFrozen(resolved) && Object.isFrozen(resolved.store) && Object.isFrozen(resolved.cluster))
  t.match(resolveTrustOptions({ ...base, store: { kind: 'postgres', url: 'postgres://u@h/db', poolSize: 4 }, cluster: { syncIntervalMs: 250, peers: ['https://b:9091'] } }).cluster, { syncIntervalMs: 250, peers: ['https://b:9091'] })
})

t.test('a bad option is refused with gate_invalid_config naming it; secrets are never echoed', async t => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...base, listen: '127.0.0.1:0' }, /unknown option "trust options.listen"/],
    [{ ...base, store: { kind: 'mysql' } }, /trust options.store must be/],
    [{ ...base, store: { kind: 'sqlite', receiptDb: '' } }, /trust options.store.receiptDb must be a path/],
    [{ ...base, store: { kind: 'postgres', url: 'postgres://h/db', poolSize: 0 } }, /trust options.store.poolSize must be a positive integer/],
    [{ ...base, serviceToken: 42 }, /trust options.serviceToken must be a string/],
    [{ ...base, authoritySeed: new Uint8Array(31).fill(7) }, /trust options.authoritySeed must be a signing key/],
    [{ ...base, cluster: { peers: ['https://b:9091'] } }, /trust options.cluster must be absent with a SQLite store/],
    [{ ...base, cluster: { syncIntervalMs: 1.5 } }, /trust options.cluster.syncIntervalMs must be a positive integer/],
    [{ ...base, cluster: { discoverPeers: true } }, /trust options.cluster must be absent with a SQLite store/],
    [{ ...base, store: { kind: 'postgres', url: 'postgres://h/db' }, cluster: { discoverPeers: 'yes' } }, /trust options.cluster.discoverPeers must be a boolean/],
    [{ ...base, store: { kind: 'postgres', url: 'postgres://h/db' }, cluster: { discoverPeers: true, peers: ['https://b:9091'] } }, /either peers \(a fixed membership\) or discoverPeers/],
    [{ ...base, host: { ...host, serve: undefined } }, /trust options.host.serve must be a function/],
  ]
  for (const [options, message] of cases) {
    t.throws(() => resolveTrustOptions(options as unknown as TrustOptions), { code: 'gate_invalid_config', message }, String(message))
  }
  t.throws(() => resolveTrustOptions({ ...base, authoritySeed: new Uint8Array(31).fill(7) }), { message: /\(hidden\)/ }, 'the seed is not printed')
})
