// Approvals on PostgreSQL: the SQLite approval store's contract (answered once while pending and
// unexpired, consumed once by the same caller, method, route and content). Each transition is one
// conditional UPDATE, so of two nodes racing on the same approval exactly one wins.
import { ApprovalStateError, DuplicateRecordError, StoreInputError } from '../errors.js'
import type { ApprovalRecord, ApprovalResponse, ApprovalStorePort, NewApproval, RequestBindings } from '../store-ports.js'
import type { PgDatabase } from './pg-database.js'

const COLUMNS = `approval_id AS "approvalId", request_id AS "requestId", caller_identity_hash AS "callerIdentityHash", method,
  route_pattern AS "routePattern", content_hash AS "contentHash", decision_receipt_id AS "decisionReceiptId", created_at AS "createdAt",
  expires_at AS "expiresAt", state, responder, reason, responded_at AS "respondedAt", consumed_at AS "consumedAt"`

export class PgApprovalStore implements ApprovalStorePort {
  readonly #db: PgDatabase
  readonly #now: () => number

  constructor(db: PgDatabase, now: () => number) {
    this.#db = db
    this.#now = now
  }

  get isEphemeral(): boolean {
    return false
  }

  /** Records a pending approval; a taken id is DuplicateRecordError (gate_conflict). */
  async create(approval: NewApproval): Promise<ApprovalRecord> {
    for (const field of ['approvalId', 'requestId', 'callerIdentityHash', 'method', 'routePattern', 'contentHash'] as const) {
      if (typeof approval[field] !== 'string' || approval[field] === '') throw new StoreInputError(field, 'a non-empty string', approval[field])
    }
    for (const field of ['createdAt', 'expiresAt'] as const) {
      if (!Number.isSafeInteger(approval[field]) || approval[field] < 0) throw new StoreInputError(field, 'Unix seconds', approval[field])
    }
    const created = await this.#db.get<ApprovalRecord>(
      `INSERT INTO approvals (approval_id, request_id, caller_identity_hash, method, route_pattern, content_hash, decision_receipt_id, created_at, expires_at, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending') ON CONFLICT (approval_id) DO NOTHING RETURNING ${COLUMNS}`,
      [
        approval.approvalId,
        approval.requestId,
        approval.callerIdentityHash,
        approval.method,
        approval.routePattern,
        approval.contentHash,
        approval.decisionReceiptId ?? null,
        approval.createdAt,
        approval.expiresAt,
      ],
    )
    if (created === undefined) throw new DuplicateRecordError('approvals', approval.approvalId)
    return created
  }

  get(approvalId: string): Promise<ApprovalRecord | undefined> {
    return this.#db.get<ApprovalRecord>(`SELECT ${COLUMNS} FROM approvals WHERE approval_id = $1`, [approvalId])
  }

  listPending(now: number = this.#now()): Promise<ApprovalRecord[]> {
    return this.#db.all<ApprovalRecord>(`SELECT ${COLUMNS} FROM approvals WHERE state = 'pending' AND expires_at > $1 ORDER BY created_at, approval_id`, [now])
  }

  async respond(approvalId: string, decision: 'approve' | 'deny', response: ApprovalResponse = {}): Promise<ApprovalRecord> {
    if (decision !== 'approve' && decision !== 'deny') throw new StoreInputError('decision', '"approve" or "deny"', decision)
    const now = response.now ?? this.#now()
    const updated = await this.#db.get<ApprovalRecord>(
      `UPDATE approvals SET state = $1, responder = $2, reason = $3, responded_at = $4
       WHERE approval_id = $5 AND state = 'pending' AND expires_at > $4 RETURNING ${COLUMNS}`,
      [decision === 'approve' ? 'approved' : 'denied', response.responder ?? null, response.reason ?? null, now, approvalId],
    )
    if (updated !== undefined) return updated
    const current = await this.get(approvalId)
    if (current === undefined) throw new ApprovalStateError(approvalId, 'unknown')
    throw new ApprovalStateError(approvalId, current.state === 'pending' ? 'expired' : current.state)
  }

  /** Consumes an approved, unexpired approval once when every binding matches; true when this call did. */
  async consume(approvalId: string, bindings: RequestBindings, now: number = this.#now()): Promise<boolean> {
    const changed = await this.#db.run(
      `UPDATE approvals SET consumed_at = $1
       WHERE approval_id = $2 AND state = 'approved' AND consumed_at IS NULL AND expires_at > $1
         AND caller_identity_hash = $3 AND method = $4 AND route_pattern = $5 AND content_hash = $6`,
      [now, approvalId, bindings.callerIdentityHash, bindings.method, bindings.routePattern, bindings.contentHash],
    )
    return changed === 1
  }
}
