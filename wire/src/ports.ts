// What the wire endpoint needs from the kernel, declared here so @gate/wire never imports its caller:
// the sidecar's ToolCallKernel satisfies WireDecider structurally (the same tool-call path as the MCP
// edges, whose request shape it reuses), and the sidecar's revocation sources (its own control routes,
// a fleet's revocation feed) are wired in as RevocationEvents (ARCHITECTURE: sdk ← mcp, wire ← sidecar).
import type { CoreReceipt, ReceiptChain } from '@gate/sdk'
import type { ToolCallRequest, ToolCallVerdict } from '@gate/mcp'

export type { ToolCallRequest }

/** A decided call; `receiptJson` is the receipt exactly as stored (canonical), when the kernel has it. */
export interface WireDecision extends ToolCallVerdict {
  receiptJson?: string
}

/** The kernel's tool-call path: each call decided and receipted exactly as an MCP tools/call is. */
export interface WireDecider {
  /** Decides one call; resolves once its receipt is durably stored. */
  decide(input: ToolCallRequest): Promise<WireDecision>
  /** The final receipt of an allowed call that did not complete; resolves once it is stored. */
  finish(decision: WireDecision, ending: { verdict: 'cancelled' | 'incomplete'; reason: string }): Promise<{ receipt: CoreReceipt; json?: string }>
  /** A new receipt lineage for one connection (spec 03, Receipt DAG): another connection, another chain. */
  openChain?(): ReceiptChain
}

/** Revocations as they commit, from wherever they come (local control routes, a fleet's feed). */
export interface RevocationEvents {
  /** Calls `listener` with each newly revoked capability id; returns an unsubscribe. */
  onRevoked(listener: (capabilityId: string) => void): () => void
}
