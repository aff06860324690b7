// Gauges of a service's link to trust-control (docs/fleet.md), read from its health block at scrape
// time: the receipt outbox's lag and how old the mirrored revocations are. Never on the request path.
import { Gauge, type Registry } from 'prom-client'
import type { FleetHealth } from '../fleet/fleet-health.js'

export function registerFleetMetrics(registry: Registry, health: () => FleetHealth): void {
  const gauge = (name: string, help: string, value: (h: FleetHealth) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value(health()))
      },
    })
  gauge('gate_fleet_outbox_lag', 'Receipts committed here that trust-control has not acknowledged yet.', h => h.outbox.lag)
  gauge('gate_fleet_revocation_sync_age_seconds', 'Age of the mirrored revocations (-1 before the first sync).', h => (h.revocations.sync_age_ms === null ? -1 : h.revocations.sync_age_ms / 1000))
  gauge('gate_fleet_revocations_stale', '1 while requests presenting a capability are denied for stale revocations, else 0.', h => (h.revocations.stale ? 1 : 0))
  gauge('gate_fleet_key_enrolled', '1 once this signing key is enrolled at trust-control, else 0.', h => (h.key_enrolled ? 1 : 0))
}
