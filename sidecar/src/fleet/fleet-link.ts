// A service's link to trust-control (--control-url, docs/fleet.md), wired once from the resolved config:
// the capability negotiation (peer-capabilities.ts), the authority it follows, the revocation mirror,
// the key enrolment, the receipt outbox and the central budgets. It replaces the service's revocation and budget ports and reports on /gate/health.
import { hostname } from 'node:os'
import type { Signer } from '@gate/sdk'
import type { FleetSettings } from '../config/fleet-flags.js'
import type { ServiceStores } from '../app/service-stores.js'
import type { RevocationPort } from '../kernel/ports.js'
import { AuthorityFollower } from './authority-follower.js'
import { ControlConnection, ControlRefusedError } from './control-connection.js'
import { KeyEnrolment } from './key-enrolment.js'
import { negotiateWithControl, requiredFeatures } from './peer-capabilities.js'
import { openOutboxCursor, ReceiptOutbox, type OutboxStatus } from './receipt-outbox.js'
import { RevocationMirror, type RevocationMirrorStatus } from './revocation-mirror.js'
import { createRemoteBudgets } from './remote-budgets.js'
import { ConfigError } from '../errors.js'
import type { FleetHealth } from './fleet-health.js'

/** How long a start waits for the first revocation sync (and the authority) before serving anyway. */
const FIRST_SYNC_WAIT_MS = 5000
/** A graceful stop ships the outbox for at most this long. */
const DRAIN_ON_STOP_MS = 5000

export interface FleetLinkOptions {
  settings: FleetSettings
  /** The fleet's control token (trust-control's service token). */
  token: string
  signer: Signer
  /** The service's name and address, for the enrolment label. */
  label: string
  /** The receipt store file (the outbox's cursor table lives in it); undefined for in-memory receipts. */
  receiptStore: string | undefined
  stores: ServiceStores
  log: (line: string) => void
}

export interface FleetLink {
  /** Capability token issuers trust-control vouches for (its authority's keys). */
  trustedIssuers(): readonly string[]
  health(): FleetHealth
  /** Drains the outbox briefly, then stops every loop and closes the connection. */
  close(): Promise<void>
}

/**
 * Connects, waits briefly for the first sync (a refused token stops the start; an unreachable
 * trust-control does not: capabilities and budgeted calls are denied until it answers), and rewires
 * `stores` (revocations: local or mirrored; budgets: central; revocation_backend: remote).
 */
export async function startFleetLink(options: FleetLinkOptions): Promise<{ link: FleetLink; stores: ServiceStores }> {
  const { settings, stores, log } = options
  const connection = new ControlConnection({ url: settings.controlUrl, token: options.token, ca: settings.ca })
  const origin = settings.controlUrl.href.replace(/\/+$/, '')
  const authority = new AuthorityFollower(connection, log)
  // spec 03 negotiation first: a peer that would refuse this service's receipts refuses the start
  let agreedAtStart = false
  try {
    const agreed = await negotiateWithControl(connection, requiredFeatures(options.signer.publicKey))
    agreedAtStart = true
    log(`fleet: trust-control ${origin} capabilities agreed: ${[...agreed].sort().join(', ') || 'none'}`)
  } catch (err) {
    if ((err as { code?: unknown }).code === 'gate_incompatible_peer') {
      connection.close()
      log(`fleet: gate_incompatible_peer: ${(err as Error).message}; refusing to start`)
      throw err
    }
    log(`fleet: trust-control ${origin} capabilities cannot be read yet (${(err as Error).message}); the signing key is not enrolled and no receipt is shipped until they agree`)
  }
  const mirror = new RevocationMirror(connection, {
    maxStalenessMs: settings.maxRevocationStalenessMs,
    log,
    onAuthority: (generation, publicKey) => authority.follow(generation, publicKey).catch(err => log(`fleet: authority: ${(err as Error).message}`)),
  })
  try {
    await authority.follow()
  } catch (err) {
    if (err instanceof ControlRefusedError && (err.answerStatus === 401 || err.answerStatus === 403)) {
      connection.close()
      throw new ConfigError(`trust-control ${origin} refused the control token (${err.answerStatus}): give the fleet's service token in GATE_CONTROL_TOKEN`, err)
    }
    log(`fleet: trust-control ${origin} cannot be read yet (${(err as Error).message}); capabilities and budgeted calls are denied until it answers`)
  }
  const synced = await mirror.start(FIRST_SYNC_WAIT_MS)
  if (!synced) log(`fleet: revocations not received from ${origin} within ${FIRST_SYNC_WAIT_MS} ms; requests presenting a capability are denied until they are`)
  const negotiate = agreedAtStart ? undefined : () => negotiateWithControl(connection, requiredFeatures(options.signer.publicKey))
  const enrolment = new KeyEnrolment(connection, { publicKey: options.signer.publicKey, label: enrolmentLabel(options.label), log, negotiate })
  const outbox = new ReceiptOutbox(connection, {
    receipts: stores.raw.receipts.query,
    writer: stores.ports.receipts,
    cursor: await openOutboxCursor(options.receiptStore),
    target: origin,
    enrolment,
    log,
  })
  await outbox.start()

  const local = stores.ports.revocations
  const revocations: RevocationPort = {
    // a local revocation (this sidecar's own POST /v1/revocations) still counts
    isRevoked: id => mirror.isRevoked(id) || local.isRevoked(id),
    refresh: local.refresh === undefined ? undefined : () => local.refresh!(),
    unavailable: () => mirror.unavailable(),
    onRevoked(listener) {
      const fromFeed = mirror.onRevoked(listener)
      const fromHere = local.onRevoked?.(listener)
      return () => {
        fromFeed()
        fromHere?.()
      }
    },
  }
  const link: FleetLink = {
    trustedIssuers: () => authority.trustedKeys(),
    health: () => fleetHealth(origin, authority, mirror.status(), settings.maxRevocationStalenessMs, enrolment.enrolled, outbox.status()),
    async close() {
      await outbox.stop(DRAIN_ON_STOP_MS)
      enrolment.stop()
      const stopped = mirror.stop()
      // ends a held feed request now instead of at its wait
      connection.close()
      await stopped
    },
  }
  const rewired: ServiceStores = {
    ...stores,
    ports: { ...stores.ports, revocations, budgets: createRemoteBudgets(connection, log) },
    revocationBackend: 'remote',
    close: async () => {
      await link.close().catch(err => log(`fleet: stop: ${(err as Error).message}`))
      await stores.close()
    },
  }
  log(`fleet: connected to trust-control ${origin} (revocations mirrored, max staleness ${settings.maxRevocationStalenessMs / 1000} s; receipts shipped from the outbox; budgets captured centrally)`)
  return { link, stores: rewired }
}

function fleetHealth(origin: string, authority: AuthorityFollower, r: RevocationMirrorStatus, maxStalenessMs: number, enrolled: boolean, o: OutboxStatus): FleetHealth {
  const a = authority.current
  return {
    control_url: origin,
    authority: a === undefined ? null : { public_key: a.publicKey, generation: a.generation, trusted_key_count: a.trustedPublicKeys.length },
    revocations: { cursor: r.cursor, revoked: r.revoked, sync_age_ms: r.syncAgeMs, stale: r.stale, max_staleness_ms: maxStalenessMs, last_error: r.lastError },
    key_enrolled: enrolled,
    outbox: { lag: o.lag, shipped_seq: o.shippedSeq, latest_seq: o.latestSeq, shipped: o.shipped, last_error: o.lastError },
  }
}

// 1-128 printable ASCII (the enrolment route's rule)
function enrolmentLabel(service: string): string {
  return `${service} on ${hostname()} pid ${process.pid}`.replace(/[^\x20-\x7e]/g, '?').slice(0, 128).trim()
}
