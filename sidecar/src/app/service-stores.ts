// The stores a running service hands to its kernel and routes, whatever backs them.
import type { KernelPorts } from '../kernel/ports.js'
import type { ApprovalAdmin, CapabilityAdmin } from '../routes/context.js'
import type { SqliteStores } from '../stores/index.js'

export interface ServiceStores {
  ports: KernelPorts
  approvals: ApprovalAdmin
  capabilities: CapabilityAdmin
  receiptBackend: 'durable' | 'ephemeral'
  /** `remote` when a fleet link mirrors trust-control's revocations (fleet/fleet-link.ts). */
  revocationBackend: 'durable' | 'remote' | 'ephemeral'
  /** Where receipts go, for the startup log line. */
  receiptLocation: string
  /** Earlier authority public keys kept after rotation. */
  previousKeys(): readonly string[]
  healthy(): boolean
  /** Flushes pending writes and closes every store. */
  close(): Promise<void>
  /** The underlying stores, for trust-control's readers. */
  raw: SqliteStores
}
