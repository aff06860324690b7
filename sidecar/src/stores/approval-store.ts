// The approval store (revision 1): requests held for a human decision. An approval is answered once,
// only while pending and unexpired; an approved request is then consumed exactly once, only by the same
// caller, method, route and content. Each transition is one conditional UPDATE, so it is atomic even
// with another process on the file.
import type { ApprovalRecord, ApprovalResponse, ApprovalStorePort, NewApproval, RequestBindings } from '@gate/trust'
import { ApprovalStateError, DuplicateRecordError, StoreFailedError, StoreInputError } from '../errors.js'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { errorText, resolveDatabaseOptions, type DatabaseOptions, type SqlParams, type SqliteDatabase } from './sqlite-driver.js'
import { checkFunctionOption, pickOptions, unixNow } from './store-options.js'

/** Options of `openApprovalStore`. */
export interface ApprovalStoreOptions extends DatabaseOptions {
  /** Clock in Unix seconds, default the system clock. */
  now?: () => number
}

/** Schema revision 1. */
export const APPROVAL_SCHEMA: StoreSchema = Object.freeze({
  store: 'approvals',
  create: [
    `CREATE TABLE approvals (
      approval_id TEXT PRIMARY KEY,
      request_id TEXT NOT NULL,
      caller_identity_hash TEXT NOT NULL,
      method TEXT NOT NULL,
      route_pattern TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      decision_receipt_id TEXT,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      state TEXT NOT NULL,
      responder TEXT,
      reason TEXT,
      responded_at INTEGER,
      consumed_at INTEGER
    ) WITHOUT ROWID`,
    'CREATE INDEX approvals_by_state ON approvals (state, expires_at)',
  ],
  migrations: [],
})

const COLUMNS = `approval_id AS approvalId, request_id AS requestId, caller_identity_hash AS callerIdentityHash, method,
  route_pattern AS routePattern, content_hash AS contentHash, decision_receipt_id AS decisionReceiptId, created_at AS createdAt,
  expires_at AS expiresAt, state, responder, reason, responded_at AS respondedAt, consumed_at AS consumedAt`

/** Opens (creating or migrating) the approval store. */
export async function openApprovalStore(path: string, options: ApprovalStoreOptions = {}): Promise<ApprovalStore> {
  const { own, database } = pickOptions('approval store options', options, ['now'])
  checkFunctionOption('approval store options.now', own.now)
  const db = await openStoreDatabase(APPROVAL_SCHEMA, path, resolveDatabaseOptions(database))
  return new ApprovalStore(db, own.now ?? unixNow)
}

/** Durable pending approvals with single-use consumption. */
export class ApprovalStore implements ApprovalStorePort {
  readonly #db: SqliteDatabase
  readonly #now: () => number

  constructor(db: SqliteDatabase, now: () => number) {
    this.#db = db
    this.#now = now
  }

  get path(): string {
    return this.#db.path
  }

  get isEphemeral(): boolean {
    return this.#db.isEphemeral
  }

  /** Records a pending approval; resolves after commit. A taken id is DuplicateRecordError (gate_conflict). */
  async create(approval: NewApproval): Promise<ApprovalRecord> {
    for (const field of ['approvalId', 'requestId', 'callerIdentityHash', 'method', 'routePattern', 'contentHash'] as const) {
      checkText(field, approval[field])
    }
    checkSeconds('createdAt', approval.createdAt)
    checkSeconds('expiresAt', approval.expiresAt)
    const decisionReceiptId = approval.decisionReceiptId ?? null
    const { changes } = await this.#write(
      `INSERT INTO approvals (approval_id, request_id, caller_identity_hash, method, route_pattern, content_hash,
         decision_receipt_id, created_at, expires_at, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT (approval_id) DO NOTHING`,
      [
        approval.approvalId,
        approval.requestId,
        approval.callerIdentityHash,
        approval.method,
        approval.routePattern,
        approval.contentHash,
        decisionReceiptId,
        approval.createdAt,
        approval.expiresAt,
      ],
    )
    if (changes !== 1) throw new DuplicateRecordError('approvals', approval.approvalId)
    return {
      approvalId: approval.approvalId,
      requestId: approval.requestId,
      callerIdentityHash: approval.callerIdentityHash,
      method: approval.method,
      routePattern: approval.routePattern,
      contentHash: approval.contentHash,
      decisionReceiptId,
      createdAt: approval.createdAt,
      expiresAt: approval.expiresAt,
      state: 'pending',
      responder: null,
      reason: null,
      respondedAt: null,
      consumedAt: null,
    }
  }

  /** The approval with this id, whatever its state. */
  async get(approvalId: string): Promise<ApprovalRecord | undefined> {
    return this.#db.get<ApprovalRecord>(`SELECT ${COLUMNS} FROM approvals WHERE approval_id = ?`, [approvalId])
  }

  /** Pending approvals not yet expired at `now`, oldest first. */
  async listPending(now: number = this.#now()): Promise<ApprovalRecord[]> {
    return this.#db.all<ApprovalRecord>(
      `SELECT ${COLUMNS} FROM approvals WHERE state = 'pending' AND expires_at > ? ORDER BY created_at, approval_id`,
      [now],
    )
  }

  /**
   * Approves or denies a pending, unexpired approval and returns the updated record. Answering one that
   * is unknown (gate_not_found), already answered or expired (gate_conflict) throws ApprovalStateError.
   */
  async respond(approvalId: string, decision: 'approve' | 'deny', response: ApprovalResponse = {}): Promise<ApprovalRecord> {
    if (decision !== 'approve' && decision !== 'deny') throw new StoreInputError('decision', '"approve" or "deny"', decision)
    const now = response.now ?? this.#now()
    const updated = await this.#writeReturning<ApprovalRecord>(
      `UPDATE approvals SET state = ?, responder = ?, reason = ?, responded_at = ?
       WHERE approval_id = ? AND state = 'pending' AND expires_at > ?
       RETURNING ${COLUMNS}`,
      [decision === 'approve' ? 'approved' : 'denied', response.responder ?? null, response.reason ?? null, now, approvalId, now],
    )
    if (updated !== undefined) return updated
    const current = await this.get(approvalId)
    if (current === undefined) throw new ApprovalStateError(approvalId, 'unknown')
    throw new ApprovalStateError(approvalId, current.state === 'pending' ? 'expired' : current.state)
  }

  /**
   * Consumes an approved, unexpired approval exactly once, only when every binding matches; true when
   * this call consumed it. Atomic: of two racing calls, one gets true.
   */
  async consume(approvalId: string, bindings: RequestBindings, now: number = this.#now()): Promise<boolean> {
    const { changes } = await this.#write(
      `UPDATE approvals SET consumed_at = ?
       WHERE approval_id = ? AND state = 'approved' AND consumed_at IS NULL AND expires_at > ?
         AND caller_identity_hash = ? AND method = ? AND route_pattern = ? AND content_hash = ?`,
      [now, approvalId, now, bindings.callerIdentityHash, bindings.method, bindings.routePattern, bindings.contentHash],
    )
    return changes === 1
  }

  /** Waits for pending writes, then closes the file. */
  close(): Promise<void> {
    return this.#db.close()
  }

  async #write(sql: string, params: SqlParams): Promise<{ changes: number }> {
    try {
      return await this.#db.run(sql, params)
    } catch (err) {
      throw new StoreFailedError('approvals', this.path, `write failed (${errorText(err)})`, err)
    }
  }

  async #writeReturning<T>(sql: string, params: SqlParams): Promise<T | undefined> {
    try {
      return await this.#db.get<T>(sql, params)
    } catch (err) {
      throw new StoreFailedError('approvals', this.path, `write failed (${errorText(err)})`, err)
    }
  }
}

function checkText(field: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new StoreInputError(field, 'a non-empty string', value)
}

function checkSeconds(field: string, value: unknown): void {
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new StoreInputError(field, 'Unix seconds', value)
}
