// The PostgreSQL connection every trust-control store shares: one `pg` pool per process, statements with
// numbered parameters only (never a value spliced into SQL), transactions with retry of the failures
// PostgreSQL asks the client to retry (serialization failure, deadlock), and one translation of driver
// errors: a database that cannot be reached is StoreUnavailableError (503, retry later), anything else
// StoreFailedError (500). The pool reconnects on demand, so a database that comes back needs no restart.
import pg from 'pg'
import { InvalidConfigError } from '@gate/sdk'
import { StoreFailedError, StoreUnavailableError } from '../errors.js'
import { copyInto } from './pg-copy.js'

/** Options of `openPgDatabase`. */
export interface PgDatabaseOptions {
  /** `postgres://user:password@host:port/database?sslmode=...` (libpq URL form). Required. */
  url: string
  /** Most connections this process opens, default 10. */
  poolSize?: number
  /** How long opening a connection may take, default 5000 ms. */
  connectTimeoutMs?: number
  /** Server-side limit of one statement, default 30000 ms (0: none). */
  statementTimeoutMs?: number
  /** `application_name` the server shows in pg_stat_activity, default "gate". */
  applicationName?: string
}

/** Defaults of `PgDatabaseOptions`. */
export const PG_DATABASE_DEFAULTS = Object.freeze({ poolSize: 10, connectTimeoutMs: 5000, statementTimeoutMs: 30_000, applicationName: 'gate' })

/** A value bound to a numbered parameter. */
export type PgValue = string | number | bigint | boolean | null | Uint8Array | readonly string[] | readonly number[] | readonly (string | null)[] | readonly (number | null)[]

/** Statements of a connection or of a transaction. */
export interface PgExecutor {
  /** Every row of `sql`. */
  all<T>(sql: string, params?: readonly PgValue[]): Promise<T[]>
  /** The first row of `sql`, if any. */
  get<T>(sql: string, params?: readonly PgValue[]): Promise<T | undefined>
  /** Runs `sql`; resolves with the number of rows it changed. */
  run(sql: string, params?: readonly PgValue[]): Promise<number>
  /** Runs a `COPY ... FROM STDIN` with `text` (COPY text format, pg-copy.ts); resolves with the rows copied. */
  copyFrom(sql: string, text: string): Promise<number>
}

export interface PgTransactionOptions {
  /** `serializable` for read-check-write sequences PostgreSQL must order; default `read committed`. */
  isolation?: 'read committed' | 'repeatable read' | 'serializable'
  /** Attempts when PostgreSQL reports a serialization failure or a deadlock (both safe to retry), default 5. */
  attempts?: number
  /**
   * `performance.now()` past which the transaction must not commit: waiting for a connection, each
   * statement (lock waits included) and the moment before COMMIT are bounded by it; past it the
   * transaction rolls back and PgDeadlineError is thrown.
   */
  deadlineAt?: number
}

/** A transaction that ran out of its deadline (PgTransactionOptions.deadlineAt): it was rolled back. */
export class PgDeadlineError extends Error {
  constructor(readonly step: string) {
    super(`deadline passed ${step}`)
    this.name = 'PgDeadlineError'
  }
}

// lock_not_available (lock_timeout) and query_canceled (statement_timeout): what a deadline raises
const DEADLINE_CODES = new Set(['55P03', '57014'])

// int8 (count, sum over bigint casts, seq) and numeric (sum) arrive as strings by default; Gate's values
// are below 2^53 (Unix seconds, seqs, minor units), so numbers it is (sums above 2^53 lose precision, as
// with SQLite: docs/trust-control.md).
const NUMBER_TYPES = new Set([20, 1700])
const parseNumber = (text: string): number => Number(text)
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    NUMBER_TYPES.has(oid) && format !== 'binary' ? parseNumber : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
}

// SQLSTATE classes and driver messages that mean "the database is not reachable now", not "this
// statement is wrong": 08 connection exception, 57P01-03 shutdown / cannot connect now, 53300 too many
// connections; socket errors; pg's own messages for a connection that died or never opened.
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '53300', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])
const UNAVAILABLE_MESSAGES = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Connection ended/i
const RETRY_CODES = new Set(['40001', '40P01'])

/** True when `err` says the database cannot be reached (rather than that a statement failed). */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true
  if (typeof err !== 'object' || err === null) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true
  const message = (err as { message?: unknown }).message
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true
  // an AggregateError of every address tried (localhost resolving to ::1 and 127.0.0.1)
  const errors = (err as { errors?: unknown }).errors
  return Array.isArray(errors) && errors.length > 0 && errors.every(isUnavailable)
}

/** The driver's message with its SQLSTATE, never the statement's parameters. */
export function pgErrorText(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err)
  const { message, code } = err as { message?: unknown; code?: unknown }
  const text = typeof message === 'string' && message !== '' ? message : String(err)
  return typeof code === 'string' && !text.includes(code) ? `${text} [${code}]` : text
}

/** The URL without its password (for logs and messages). */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    parsed.search = ''
    return parsed.toString()
  } catch {
    return 'postgres://(unparsable url)'
  }
}

/** Checks a `--database-url` value: a postgres:// or postgresql:// URL naming a host. */
export function checkDatabaseUrl(url: unknown, option = 'database url'): string {
  if (typeof url !== 'string' || url === '') throw new InvalidConfigError(option, 'a postgres:// URL', url)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new InvalidConfigError(option, 'a postgres:// URL', redactDatabaseUrl(url))
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new InvalidConfigError(option, 'a postgres:// or postgresql:// URL', `${parsed.protocol}//…`)
  if (parsed.pathname.length <= 1) throw new InvalidConfigError(option, 'a URL naming the database (postgres://host/DATABASE)', redactDatabaseUrl(url))
  return url
}

/** One PostgreSQL database: the pool, statement helpers, transactions and error translation. */
export class PgDatabase implements PgExecutor {
  readonly pool: pg.Pool
  /** The URL without its password. */
  readonly location: string
  #closing: Promise<void> | undefined

  constructor(options: PgDatabaseOptions) {
    const url = checkDatabaseUrl(options.url)
    const settings = { ...PG_DATABASE_DEFAULTS, ...dropUndefined(options) }
    for (const key of ['poolSize', 'connectTimeoutMs', 'statementTimeoutMs'] as const) {
      const value = settings[key]
      if (!Number.isSafeInteger(value) || value < (key === 'poolSize' ? 1 : 0)) throw new InvalidConfigError(`database options.${key}`, 'a non-negative integer', value)
    }
    this.location = redactDatabaseUrl(url)
    this.pool = new pg.Pool({
      connectionString: url,
      max: settings.poolSize,
      connectionTimeoutMillis: settings.connectTimeoutMs,
      idleTimeoutMillis: 30_000,
      application_name: settings.applicationName,
      statement_timeout: settings.statementTimeoutMs === 0 ? undefined : settings.statementTimeoutMs,
      // a dead server is noticed by the OS within seconds, not hours
      keepAlive: true,
      types: TYPES,
    })
    // An idle client whose server went away emits 'error' on the pool; without a listener that would
    // crash the process. The next query opens a new connection (or fails with a 503).
    this.pool.on('error', () => undefined)
  }

  all<T>(sql: string, params: readonly PgValue[] = []): Promise<T[]> {
    return this.#translate(async () => (await this.pool.query(sql, params as unknown[])).rows as T[])
  }

  async get<T>(sql: string, params: readonly PgValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0]
  }

  run(sql: string, params: readonly PgValue[] = []): Promise<number> {
    return this.#translate(async () => (await this.pool.query(sql, params as unknown[])).rowCount ?? 0)
  }

  copyFrom(sql: string, text: string): Promise<number> {
    return this.withClient(client => copyInto(client, sql, text))
  }

  /** Runs `fn` on one connection in one transaction; retries it whole on serialization failure or deadlock. */
  async transaction<R>(fn: (tx: PgExecutor) => Promise<R>, options: PgTransactionOptions = {}): Promise<R> {
    const attempts = options.attempts ?? 5
    const { deadlineAt } = options
    const remaining = () => (deadlineAt === undefined ? Number.POSITIVE_INFINITY : Math.floor(deadlineAt - performance.now()))
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.withClient(async client => {
          await client.query(options.isolation === 'serializable' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : options.isolation === 'repeatable read' ? 'BEGIN ISOLATION LEVEL REPEATABLE READ' : 'BEGIN')
          try {
            if (deadlineAt !== undefined) {
              const ms = remaining()
              if (ms <= 0) throw new PgDeadlineError('before the first statement')
              // every statement, and every lock wait, ends by the deadline (server side)
              await client.query("SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $1, true)", [`${ms}ms`])
            }
            const result = await fn(executorOf(client))
            // nothing commits after its deadline: the caller has stopped waiting, or is about to
            if (remaining() <= 0) throw new PgDeadlineError('before COMMIT')
            await client.query('COMMIT')
            return result
          } catch (err) {
            await client.query('ROLLBACK').catch(() => undefined)
            const code = (err as { code?: unknown } | undefined)?.code
            if (deadlineAt !== undefined && typeof code === 'string' && DEADLINE_CODES.has(code)) throw new PgDeadlineError(`waiting for a lock or a statement (${code})`)
            throw err
          }
        }, deadlineAt)
      } catch (err) {
        const code = (err as { code?: unknown } | undefined)?.code
        if (attempt < attempts && typeof code === 'string' && RETRY_CODES.has(code)) continue
        throw err
      }
    }
  }

  /** Runs `fn` with one pooled connection of its own (session-level locks); errors are translated. */
  withClient<R>(fn: (client: pg.PoolClient) => Promise<R>, deadlineAt?: number): Promise<R> {
    return this.#translate(async () => {
      const client = deadlineAt === undefined ? await this.pool.connect() : await connectBy(this.pool, deadlineAt)
      let broken: unknown
      // The pool stops listening for a connection's errors while it is lent out: a server that goes
      // away while `fn` awaits something else would emit 'error' with no listener and end the process.
      const onError = (err: Error) => (broken ??= err)
      client.on('error', onError)
      try {
        return await fn(client)
      } catch (err) {
        if (isUnavailable(err)) broken ??= err
        throw err
      } finally {
        client.off('error', onError)
        // a connection that failed mid-transaction is discarded, not handed to the next caller
        client.release(broken === undefined ? undefined : (broken as Error))
      }
    })
  }

  /** Closes every connection (idempotent). */
  close(): Promise<void> {
    this.#closing ??= this.pool.end().catch(() => undefined)
    return this.#closing
  }

  async #translate<R>(fn: () => Promise<R>): Promise<R> {
    try {
      return await fn()
    } catch (err) {
      throw toStoreError(err, 'database', this.location)
    }
  }
}

/** A driver error as Gate's error: unavailable (503) or failed (500); Gate errors pass through. */
export function toStoreError(err: unknown, store: string, location: string): Error {
  if (err instanceof StoreUnavailableError) return err
  if (isUnavailable(err)) return new StoreUnavailableError(store, location, pgErrorText(err), err)
  if (err instanceof pg.DatabaseError || !(err instanceof Error)) return new StoreFailedError(store, location, pgErrorText(err), err)
  // Gate's own errors and a transaction's deliberate throws pass through
  return err
}

// A pooled connection by `deadlineAt` (performance.now()), else PgDeadlineError; one that arrives after
// the deadline goes straight back to the pool.
function connectBy(pool: pg.Pool, deadlineAt: number): Promise<pg.PoolClient> {
  const ms = deadlineAt - performance.now()
  if (ms <= 0) return Promise.reject(new PgDeadlineError('before a connection was free'))
  return new Promise((resolve, reject) => {
    let late = false
    const timer = setTimeout(() => {
      late = true
      reject(new PgDeadlineError('waiting for a connection'))
    }, ms)
    pool.connect().then(
      client => {
        clearTimeout(timer)
        if (late) client.release()
        else resolve(client)
      },
      err => {
        clearTimeout(timer)
        if (!late) reject(err)
      },
    )
  })
}

function executorOf(client: pg.PoolClient): PgExecutor {
  return {
    all: async <T>(sql: string, params: readonly PgValue[] = []) => (await client.query(sql, params as unknown[])).rows as T[],
    get: async <T>(sql: string, params: readonly PgValue[] = []) => (await client.query(sql, params as unknown[])).rows[0] as T | undefined,
    run: async (sql: string, params: readonly PgValue[] = []) => (await client.query(sql, params as unknown[])).rowCount ?? 0,
    copyFrom: (sql: string, text: string) => copyInto(client, sql, text),
  }
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}
