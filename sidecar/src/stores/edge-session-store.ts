// The edge-session store (revision 1) of `gate mcp serve-http`: hosted sessions and each session's
// retained notification window (spec 03, "Events"), in a SQLite file beside the receipt store
// (`/x/receipts.edge_sessions.db`), so a restarted edge resumes a live session and replays what its
// client missed. Spec 03's upgrade procedure backs this file up with the others. No credential is kept:
// a session's principal is a hash (@gate/mcp hosted-admission.ts) and capability tokens never land here.
import { basename, dirname, extname, join } from 'node:path'
import type { EdgeEvent, EdgeSessionRecord, EdgeSessionStore, HostedSessionState } from '@gate/mcp'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'
import { isInMemoryPath } from './store-paths.js'

/** Schema revision 1. */
const EDGE_SESSION_SCHEMA: StoreSchema = Object.freeze({
  store: 'edge_sessions',
  create: [
    `CREATE TABLE edge_sessions (
      session_id TEXT PRIMARY KEY,
      state TEXT NOT NULL,
      protocol_version TEXT NOT NULL,
      principal TEXT NOT NULL,
      client_info TEXT NOT NULL,
      client_capabilities TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_active_at INTEGER NOT NULL
    ) WITHOUT ROWID`,
    'CREATE INDEX edge_sessions_by_activity ON edge_sessions (last_active_at)',
    `CREATE TABLE edge_events (
      session_id TEXT NOT NULL,
      sequence INTEGER NOT NULL,
      stream_id TEXT NOT NULL,
      message TEXT NOT NULL,
      PRIMARY KEY (session_id, sequence)
    ) WITHOUT ROWID`,
  ],
  migrations: [],
})

/** `/x/receipts.db` → `/x/receipts.edge_sessions.db`, the way the other stores sit beside it; in memory stays in memory. */
export function edgeSessionPathBeside(receiptPath: string): string {
  if (isInMemoryPath(receiptPath)) return ':memory:'
  const ext = extname(receiptPath)
  return join(dirname(receiptPath), `${basename(receiptPath, ext)}.edge_sessions${ext === '' ? '.db' : ext}`)
}

export async function openEdgeSessionStore(path: string, options: DatabaseOptions = {}): Promise<SqliteEdgeSessionStore> {
  return new SqliteEdgeSessionStore(await openStoreDatabase(EDGE_SESSION_SCHEMA, path, resolveDatabaseOptions(options)))
}

interface SessionRow {
  session_id: string
  state: string
  protocol_version: string
  principal: string
  client_info: string
  client_capabilities: string
  created_at: number
  last_active_at: number
}

const toRecord = (row: SessionRow): EdgeSessionRecord => ({
  id: row.session_id,
  state: row.state as HostedSessionState,
  protocolVersion: row.protocol_version,
  principal: row.principal,
  clientInfo: JSON.parse(row.client_info) as EdgeSessionRecord['clientInfo'],
  clientCapabilities: JSON.parse(row.client_capabilities) as Record<string, unknown>,
  createdAt: Number(row.created_at),
  lastActiveAt: Number(row.last_active_at),
})

export class SqliteEdgeSessionStore implements EdgeSessionStore {
  readonly #db: SqliteDatabase

  constructor(db: SqliteDatabase) {
    this.#db = db
  }

  get path(): string {
    return this.#db.path
  }

  async put(record: EdgeSessionRecord): Promise<void> {
    await this.#db.run(
      `INSERT INTO edge_sessions (session_id, state, protocol_version, principal, client_info, client_capabilities, created_at, last_active_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, last_active_at = excluded.last_active_at`,
      [record.id, record.state, record.protocolVersion, record.principal, JSON.stringify(record.clientInfo), JSON.stringify(record.clientCapabilities), record.createdAt, record.lastActiveAt],
    )
  }

  async get(id: string): Promise<EdgeSessionRecord | undefined> {
    const row = await this.#db.get<SessionRow>('SELECT * FROM edge_sessions WHERE session_id = ?', [id])
    return row === undefined ? undefined : toRecord(row)
  }

  async list(limit: number): Promise<EdgeSessionRecord[]> {
    return (await this.#db.all<SessionRow>('SELECT * FROM edge_sessions ORDER BY created_at DESC LIMIT ?', [limit])).map(toRecord)
  }

  // one transaction for a whole batch (the hosted edge writes its events behind, in batches: session-events.ts)
  async appendEvents(events: readonly EdgeEvent[], window: number): Promise<void> {
    if (events.length === 0) return
    const last = new Map<string, number>()
    for (const event of events) last.set(event.sessionId, Math.max(last.get(event.sessionId) ?? 0, event.sequence))
    await this.#db.batch([
      ...events.map(event => ({
        sql: 'INSERT INTO edge_events (session_id, sequence, stream_id, message) VALUES (?, ?, ?, ?)',
        params: [event.sessionId, event.sequence, event.streamId, JSON.stringify(event.message)],
      })),
      ...[...last].map(([sessionId, sequence]) => ({ sql: 'DELETE FROM edge_events WHERE session_id = ? AND sequence <= ?', params: [sessionId, sequence - window] })),
    ])
  }

  async eventsAfter(sessionId: string, sequence: number): Promise<EdgeEvent[]> {
    const rows = await this.#db.all<{ sequence: number; stream_id: string; message: string }>(
      'SELECT sequence, stream_id, message FROM edge_events WHERE session_id = ? AND sequence > ? ORDER BY sequence',
      [sessionId, sequence],
    )
    return rows.map(row => ({ sessionId, sequence: Number(row.sequence), streamId: row.stream_id, message: JSON.parse(row.message) as EdgeEvent['message'] }))
  }

  async sequenceRange(sessionId: string): Promise<{ first: number; last: number }> {
    const row = await this.#db.get<{ first: number | null; last: number | null }>('SELECT min(sequence) AS first, max(sequence) AS last FROM edge_events WHERE session_id = ?', [sessionId])
    return { first: Number(row?.first ?? 0), last: Number(row?.last ?? 0) }
  }

  async dropEvents(sessionId: string): Promise<void> {
    await this.#db.run('DELETE FROM edge_events WHERE session_id = ?', [sessionId])
  }

  async prune(before: number): Promise<number> {
    const [, sessions] = await this.#db.batch([
      { sql: 'DELETE FROM edge_events WHERE session_id IN (SELECT session_id FROM edge_sessions WHERE last_active_at < ?)', params: [before] },
      { sql: 'DELETE FROM edge_sessions WHERE last_active_at < ?', params: [before] },
    ])
    return sessions?.changes ?? 0
  }

  async close(): Promise<void> {
    await this.#db.close()
  }
}
