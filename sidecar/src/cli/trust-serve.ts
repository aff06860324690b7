// `gate trust serve`: trust-control (spec 03; @gate/trust's createTrustServer) over the SQLite files a
// sidecar writes (one host) or one PostgreSQL database any number of nodes share (--database-url;
// docs/postgres.md). This file reads the flags and starts it; usage errors exit 2, startup failures exit
// 1; SIGTERM drains, flushes the receipt log and closes the stores.
import { CLUSTER_SYNC_INTERVAL_MS, createTrustServer } from '@gate/trust/server'
import { createTrustHost } from '../app/trust-host.js'
import { LISTENER_TIMEOUT_FLAGS_HELP } from '../config/listener-timeouts.js'
import { OBSERVABILITY_FLAGS_HELP } from '../config/observability-flags.js'
import { TLS_FLAGS_HELP } from '../config/tls-flags.js'
import { TRANSPARENCY_FLAGS_HELP } from '../config/transparency-flags.js'
import { readTrustServeFlags, TRUST_DEFAULT_LISTEN, TRUST_SERVE_FLAG_OPTIONS } from '../config/trust-serve-flags.js'
import { createGateLogger } from '../observability/logger.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { waitForShutdown } from './sidecar.js'

export const TRUST_SERVE_USAGE = `Usage: gate trust serve (--receipt-db PATH | --database-url URL) (--service-token-file PATH | GATE_CONTROL_TOKEN)
                       [--listen ADDR] [--authority-seed-file PATH | --authority-db PATH]
                       [--revocation-db PATH] [--budget-db PATH] [--tenant-token TENANT=FILE ...]
                       [--advertise-url URL] [--cluster-peer URL ... | --cluster-discover-peers]
                       [--tls-cert PATH --tls-key PATH]

Serves trust-control: GET /v1/receipts/query, /v1/agents/{subject_key}/receipts, /v1/receipts/analytics,
/v1/reports/operator, GET/POST /v1/receipts/tools and /v1/receipts/children, GET/POST /v1/authority,
POST /v1/capabilities/issue and /v1/revocations, the transparency log's GET /v1/receipts/{id}/proof and
GET/POST /v1/checkpoints..., POST /v1/receipts/ingest, POST /v1/keys/enroll, GET /v1/keys,
POST /v1/budgets/capture, GET /health (no auth) and, with --database-url, GET /v1/internal/cluster/status
(peer-authenticated, gate.cluster.peer.v1).
Every /v1 route needs Authorization: Bearer <token>. The service token reads and writes everything; a
tenant token reads only receipts whose caller tenant is its tenant, and only through the receipt query,
agent and tool-receipt routes.

State (one of):
  --receipt-db PATH           the SQLite receipt store of one host (e.g. the --receipt-store of gate sidecar).
                              Issued capabilities (the agent lineage) are read from its sibling
                              PATH-stem.capabilities.db
  --database-url URL          PostgreSQL (postgres://user:password@host:port/database?sslmode=verify-full),
                              shared by any number of nodes; also GATE_DATABASE_URL (preferred: keeps the
                              password off argv). Migrations run at start (gate trust migrate runs them alone)

Options:
  --listen ADDR               listen address (default ${TRUST_DEFAULT_LISTEN}; port 0 picks a free port)
  --revocation-db PATH        SQLite revocation store (default: beside the receipt store)
  --budget-db PATH            SQLite budget store (default: beside the receipt store)
  --authority-seed-file PATH  sign with this key file, of any algorithm (gate keygen [--algorithm NAME] PATH).
                              The key is recorded in the authority store (or the database) so earlier keys,
                              of every algorithm, stay trusted; rotation is refused (the file pins the key)
  --authority-db PATH         SQLite authority store holding the signing key (created with a fresh Ed25519 key
                              when empty); POST /v1/authority rotates it, to a key of the same algorithm or,
                              with the body {"algorithm": NAME}, another. Default when neither is given:
                              beside the receipt store. With --database-url the key is in the database
  --service-token-file PATH   file holding the admin service token (at least 16 characters); else the
                              GATE_CONTROL_TOKEN environment variable. Tokens are never taken from argv.
                              Every node of a cluster uses the same one (peer authentication digests it)
  --tenant-token TENANT=FILE  a read token for tenant TENANT (the CallerIdentity.tenant of its receipts),
                              read from FILE (repeatable)
${LISTENER_TIMEOUT_FLAGS_HELP}
  -h, --help                  show this help

Cluster (with --database-url; docs/postgres.md):
  --advertise-url URL         this node's URL as its peers and load balancer reach it; its node id
                              (default: the URL it listens on)
  --cluster-peer URL          another node's advertise URL (repeatable): the fixed membership quorum is
                              counted over, and the peer-auth allowlist (spec 03). Without any, a cluster
                              of one
  --cluster-discover-peers    take the membership from the database's heartbeat table instead (the nodes
                              seen lately). Gives up a fixed quorum: a dead node is dropped after 30 s, so
                              a lone survivor leads alone; any writer of the table joins the allowlist
  --cluster-sync-interval-ms N  heartbeat interval (default ${CLUSTER_SYNC_INTERVAL_MS}); the lease is 3x, clamped to 0.5-5 s.
                              On a loaded host raise it (1700: a 5 s lease) so a stalled node is not stale
  --database-pool-size N      most database connections of this node's requests (default 10); the
                              heartbeat (1), the revocation feed (2), budget captures (N/2, at least 2)
                              and the revocation listener (1) have their own

${TLS_FLAGS_HELP}

${TRANSPARENCY_FLAGS_HELP}

${OBSERVABILITY_FLAGS_HELP}`

export async function run(argv: string[]): Promise<number> {
  // `gate trust serve ...` reaches here with argv after `serve`; `gate trust` alone lands here too.
  return runWithExitCodes('trust serve', TRUST_SERVE_USAGE, async () => {
    const { values } = parseFlags(argv, TRUST_SERVE_FLAG_OPTIONS)
    if (values.help === true) {
      process.stdout.write(TRUST_SERVE_USAGE + '\n')
      return 0
    }
    const settings = await readTrustServeFlags(values)
    // JSON lines escape every control character: no value can drive the terminal (docs/security.md)
    const logger = createGateLogger('gate trust serve', settings.host.observability.logLevel)
    const server = await createTrustServer({ ...settings.options, host: await createTrustHost({ ...settings.host, logger }) })
    await waitForShutdown({ logger, inFlight: () => server.inFlight(), close: () => server.close() }, 'stores flushed, stopped')
    return 0
  })
}
