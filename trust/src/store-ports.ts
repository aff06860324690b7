// What trust-control needs from its stores, whichever backend holds them: the SQLite stores of one host
// (open-stores.ts) and the PostgreSQL stores of a fleet (postgres/pg-stores.ts) both satisfy it, so the
// wiring, the query engine, analytics and reports are written once against these types.
import type { CapabilityToken, CapturePlan } from '@gate/sdk'
import type { CostUsageRow, GrantUsageRow, ListedReceiptFilter, ListedReceiptInput, ListedReceiptKind, ListedReceiptRow } from '@gate/trust'
import type { CaptureResult } from '../kernel/ports.js'
import type { AuthorityState } from './authority-store.js'
import type { CommittedReceipts, ReceiptRow } from './receipt-log.js'
import type { ReceiptQuery } from './receipt-query.js'
import type { RevocationRecord, RevokeResult } from './revocation-store.js'

/** The receipt log: group-committed appends and core-form updates, followers of its commits. */
export interface TrustReceiptLog {
  /** Resolves after COMMIT; `stored` is false where the backend found the id already stored (PostgreSQL). */
  append(row: ReceiptRow): Promise<{ seq: number; stored?: boolean }>
  appendMany(rows: readonly ReceiptRow[]): Promise<{ seq: number; stored?: boolean }[]>
  setCoreJson(seq: number, coreJson: string): Promise<boolean>
  onCommitted(follower: (batch: CommittedReceipts) => void): () => void
  flush(): Promise<void>
  close(): Promise<void>
  readonly healthy: boolean
}

/** Reads of committed receipts. */
export type TrustReceiptReader = Pick<ReceiptQuery, 'latestSeq' | 'queryPage' | 'countMatching' | 'aggregate' | 'getById' | 'getBySeq' | 'findStored' | 'listAfter' | 'iterate' | 'listCorePending' | 'findFinals' | 'count'>

export interface TrustReceiptStore {
  readonly isEphemeral: boolean
  log: TrustReceiptLog
  query: TrustReceiptReader
  listed: {
    append(input: ListedReceiptInput): Promise<{ seq: number; stored: boolean }>
    list(kind: ListedReceiptKind, filter: ListedReceiptFilter, limit: number): Promise<ListedReceiptRow[]>
  }
}

/** The authority key store: cached keys, generation and rotation. */
export interface TrustAuthorityStore {
  readonly isEphemeral: boolean
  readonly path: string
  current(): AuthorityState | undefined
  trustedPublicKeys(): string[]
  ensureKey(createSeed: () => Uint8Array): Promise<AuthorityState>
  rotate(newSeed: Uint8Array): Promise<AuthorityState>
  reload(): Promise<void>
}

/** Every store trust-control reads and writes. */
export interface TrustStores {
  receipts: TrustReceiptStore
  revocations: {
    readonly isEphemeral: boolean
    revoke(capabilityId: string): Promise<RevokeResult>
    listAfter(afterSeq: number, limit: number): Promise<RevocationRecord[]>
    latestSeq(): Promise<number>
  }
  budgets: {
    readonly isEphemeral: boolean
    readonly healthy: boolean
    capture(plan: CapturePlan): Promise<CaptureResult>
    listGrants(limit: number): Promise<GrantUsageRow[]>
    usage(capabilityId: string): Promise<{ grants: GrantUsageRow[]; costs: CostUsageRow[] }>
  }
  capabilities: {
    readonly isEphemeral: boolean
    remember(token: CapabilityToken): Promise<void>
    get(capabilityId: string): Promise<CapabilityToken | undefined>
    idsForSubject(subject: string): Promise<string[]>
    subjectsOf(capabilityIds: readonly string[]): Promise<Map<string, string>>
  }
  authority: TrustAuthorityStore
}
