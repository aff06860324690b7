// The `fleet` block of /gate/health (docs/fleet.md), apart from the link so the routes can name it
// without importing the fleet wiring.

/** /gate/health's `fleet` block. */
export interface FleetHealth {
  control_url: string
  authority: { public_key: string; generation: number; trusted_key_count: number } | null
  revocations: { cursor: number; revoked: number; sync_age_ms: number | null; stale: boolean; max_staleness_ms: number; last_error: string | null }
  key_enrolled: boolean
  outbox: { lag: number; shipped_seq: number; latest_seq: number; shipped: number; last_error: string | null }
}
