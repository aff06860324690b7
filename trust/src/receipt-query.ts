// The receipt query engine behind GET /v1/receipts/query, the agent route and `gate receipt list`
// (spec 03): filters AND-combined, pages by `seq`, `totalCount` over every match regardless of cursor
// and limit, and stored core receipts served byte for byte. A row whose core form is made on this read is
// verified first; one that fails is served as stored and listed in `unverifiedReceipts` (additive).
//
// Consistency: each response is computed over one snapshot bound M = the highest committed seq read
// first. Group commit assigns seqs in commit order, so every receipt with seq <= M is already committed
// and no later commit can add one: the page (seq in (cursor, M]) and the count (seq <= M) describe the
// same set, and a client paging while receipts keep arriving visits every receipt exactly once.
//
// Counts are cached per filter as (M, count); the next page only counts receipts appended since M
// (a short seq range), so paging through a broad filter pays for one full count, not one per page.
import { canonicalJson } from '@gate/sdk'
import { toCoreJson } from './core-form.js'
import type { StoredReceiptStep } from './stored-receipt-check.js'
import type { AuthorityPort, CorpusFilter, CorpusRow, LineagePort, Principal, ReceiptCorpusPort } from './ports.js'
import {
  lowerBound,
  readClamped,
  readCurrency,
  readOutcome,
  readQueryParameters,
  readSubjectKey,
  readText,
  readU64,
  upperBound,
} from './query-params.js'
import { TrustRequestError } from './errors.js'

/** Page size limits of spec 03: clamped to 1..200, default 50. */
export const PAGE_LIMIT = Object.freeze({ min: 1, max: 200, default: 50 })

/** The filters of GET /v1/receipts/query. */
export const RECEIPT_QUERY_PARAMETERS: readonly string[] = Object.freeze([
  'capabilityId',
  'toolServer',
  'toolName',
  'outcome',
  'since',
  'until',
  'minCost',
  'maxCost',
  'costCurrency',
  'agentSubject',
  'cursor',
  'limit',
])

/** The agent-scoped route accepts only these. */
export const AGENT_QUERY_PARAMETERS: readonly string[] = Object.freeze(['cursor', 'limit'])

/** A parsed receipt query. */
export interface ReceiptQueryRequest {
  filter: CorpusFilter
  agentSubject?: string
  /** seq > cursor; undefined when the cursor lies beyond every stored seq. */
  cursor: number | undefined
  limit: number
  /** A bound nothing stored can meet (a u64 beyond 2^53): the answer is empty without a query. */
  impossible: boolean
}

/** Parses and validates the query string of GET /v1/receipts/query. */
export function parseReceiptQuery(url: URL): ReceiptQueryRequest {
  const values = readQueryParameters(url, RECEIPT_QUERY_PARAMETERS)
  const minCost = readU64(values, 'minCost')
  const maxCost = readU64(values, 'maxCost')
  const costCurrency = readCurrency(values, 'costCurrency')
  // spec 03, Errors 400: cost filters invalid
  if ((minCost !== undefined || maxCost !== undefined) && costCurrency === undefined) {
    throw new TrustRequestError('costCurrency is required whenever minCost or maxCost is present')
  }
  if (minCost !== undefined && maxCost !== undefined && minCost > maxCost) throw new TrustRequestError(`minCost (${minCost}) is above maxCost (${maxCost})`)
  const since = lowerBound(readU64(values, 'since'))
  const min = lowerBound(minCost)
  const filter: CorpusFilter = {
    capabilityId: readText(values, 'capabilityId'),
    toolServer: readText(values, 'toolServer'),
    toolName: readText(values, 'toolName'),
    outcome: readOutcome(values, 'outcome'),
    since: since.value,
    until: upperBound(readU64(values, 'until')),
    minCost: min.value,
    maxCost: upperBound(maxCost),
    costCurrency,
  }
  const cursor = readU64(values, 'cursor')
  return {
    filter: dropUndefined(filter),
    agentSubject: readSubjectKey(values, 'agentSubject'),
    cursor: cursor === undefined ? 0 : cursor > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(cursor),
    limit: readClamped(values, 'limit', PAGE_LIMIT.min, PAGE_LIMIT.max, PAGE_LIMIT.default),
    impossible: since.impossible || min.impossible,
  }
}

/** Parses the query string of GET /v1/agents/{subject_key}/receipts (only cursor and limit). */
export function parseAgentQuery(url: URL, subjectKey: string): ReceiptQueryRequest {
  const values = readQueryParameters(url, AGENT_QUERY_PARAMETERS)
  const key = readSubjectKey(new Map([['subject_key', subjectKey]]), 'subject_key')
  const cursor = readU64(values, 'cursor')
  return {
    filter: {},
    agentSubject: key,
    cursor: cursor === undefined ? 0 : cursor > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(cursor),
    limit: readClamped(values, 'limit', PAGE_LIMIT.min, PAGE_LIMIT.max, PAGE_LIMIT.default),
    impossible: false,
  }
}

/** The filter a principal may read with: a tenant principal's tenant is always added. */
export function scopeFilter(filter: CorpusFilter, principal: Principal): CorpusFilter {
  return principal.kind === 'tenant' ? { ...filter, tenant: principal.tenant } : filter
}

const COUNT_CACHE_SIZE = 512

export interface ReceiptQueryEngineDeps {
  corpus: ReceiptCorpusPort
  lineage: LineagePort
  /** The signer core forms are made with, and the keys a stored receipt must verify against first. */
  authority: Pick<AuthorityPort, 'signer' | 'status'>
  log: (line: string) => void
  /** Persist core forms computed on the read path (default true). */
  persistCoreForms?: boolean
  /** Called for each row refused a core form because its stored text does not verify (the metric). */
  onUnverified?: (receipt: UnverifiedReceipt) => void
}

/**
 * A row whose core form was refused because its stored text does not verify against the authority's
 * trusted keys: served as stored, with the step that failed (wire: an `unverifiedReceipts` element).
 */
export interface UnverifiedReceipt {
  /** The row's receipt id. */
  receiptId: string
  seq: number
  failedStep: StoredReceiptStep
  detail: string
}

/** What a page of rows is served as: one text per row, and the rows refused a core form. */
export interface ServedReceipts {
  texts: string[]
  unverified: UnverifiedReceipt[]
}

/** One query response, ready to send: the JSON text and what it holds. */
export interface ReceiptQueryResult {
  json: string
  totalCount: number
  nextCursor: number | null
  /** The served receipt texts, in order. */
  receipts: string[]
  /** Rows of the page served as stored because they do not verify (empty: the member is left out). */
  unverified: UnverifiedReceipt[]
}

/** Runs receipt queries; keeps the count cache. */
export class ReceiptQueryEngine {
  readonly #deps: ReceiptQueryEngineDeps
  readonly #counts = new Map<string, { through: number; count: number }>()

  constructor(deps: ReceiptQueryEngineDeps) {
    this.#deps = deps
  }

  /** Answers a parsed query for `principal`. */
  async query(request: ReceiptQueryRequest, principal: Principal): Promise<ReceiptQueryResult> {
    if (request.impossible) return buildResult(0, null, { texts: [], unverified: [] })
    const filter = scopeFilter(await this.resolveAgent(request.filter, request.agentSubject), principal)
    const snapshot = await this.#deps.corpus.latestSeq()
    // The count and the page read different connections of the store: run them side by side.
    const [totalCount, rows] = await Promise.all([
      this.count(filter, snapshot),
      request.cursor === undefined || request.cursor >= snapshot
        ? Promise.resolve([])
        : this.#deps.corpus.queryPage({ ...filter, afterSeq: request.cursor, throughSeq: snapshot }, request.limit),
    ])
    const served = await this.serve(rows)
    // spec 03: nextCursor only when the page came back full
    const nextCursor = rows.length === request.limit ? rows[rows.length - 1]!.seq : null
    return buildResult(totalCount, nextCursor, served)
  }

  /** Adds the agent filter: the stored subject key, plus the lineage join for rows without one. */
  async resolveAgent(filter: CorpusFilter, agentSubject: string | undefined): Promise<CorpusFilter> {
    if (agentSubject === undefined) return filter
    const capabilityIds = (await this.#deps.lineage.idsForSubject(agentSubject)).sort()
    return { ...filter, subject: { subjectKey: agentSubject, capabilityIds } }
  }

  /** Matches of `filter` among seq <= snapshot, from the cache plus a count of what is new. */
  async count(filter: CorpusFilter, snapshot: number): Promise<number> {
    const key = canonicalJson(filter)
    const cached = this.#counts.get(key)
    let count: number
    if (cached === undefined) {
      count = await this.#deps.corpus.countMatching({ ...filter, throughSeq: snapshot })
    } else if (cached.through <= snapshot) {
      count = cached.through === snapshot ? cached.count : cached.count + (await this.#deps.corpus.countMatching({ ...filter, afterSeq: cached.through, throughSeq: snapshot }))
    } else {
      // a concurrent request already counted a later snapshot: subtract what lies beyond ours
      count = cached.count - (await this.#deps.corpus.countMatching({ ...filter, afterSeq: snapshot, throughSeq: cached.through }))
    }
    const latest = this.#counts.get(key)
    if (latest === undefined || latest.through < snapshot) {
      this.#counts.delete(key)
      this.#counts.set(key, { through: snapshot, count })
      if (this.#counts.size > COUNT_CACHE_SIZE) this.#counts.delete(this.#counts.keys().next().value as string)
    }
    return count
  }

  /**
   * The text served for each row: its stored core receipt; else the core form computed now with the
   * current authority key (and persisted), once the stored HttpReceipt verifies against the authority's
   * trusted keys; else the stored HttpReceipt itself, byte for byte: when it does not verify (listed in
   * `unverified` with the failing step, nothing signed, nothing persisted, so every read checks it
   * again), or when a key this process does not hold signed it (another authority's, or a retired
   * key's: it verifies offline, spec 02). A receipt is never dropped from a page, re-signed under a key
   * that did not sign it, or signed unverified. A stored text that is not JSON at all is served as null.
   */
  async serve(rows: readonly CorpusRow[]): Promise<ServedReceipts> {
    const texts: string[] = []
    const unverified: UnverifiedReceipt[] = []
    let signer
    let trustedKeys: readonly string[] | undefined
    for (const row of rows) {
      // a core-only receipt (a tool call's) is its core form: served as signed
      if (row.httpJson === null || (row.coreJson !== null && !isLegacyCoreForm(row.coreJson, row.receiptId))) {
        texts.push(row.coreJson ?? 'null')
        continue
      }
      signer ??= this.#deps.authority.signer()
      trustedKeys ??= this.#deps.authority.status().trustedPublicKeys
      const core = toCoreJson({ receiptId: row.receiptId, httpJson: row.httpJson }, signer, trustedKeys)
      if ('json' in core) {
        texts.push(core.json)
        if (this.#deps.persistCoreForms !== false) {
          this.#deps.corpus.setCoreJson(row.seq, core.json).catch(err => this.#deps.log(`core receipt of seq ${row.seq} not persisted: ${(err as Error).message}`))
        }
        continue
      }
      if (core.problem === 'unverified') {
        const refused: UnverifiedReceipt = { receiptId: row.receiptId, seq: row.seq, failedStep: core.step, detail: core.detail }
        unverified.push(refused)
        this.#deps.onUnverified?.(refused)
        this.#deps.log(`receipt ${row.receiptId} (seq ${row.seq}) does not verify (${core.step}: ${core.detail}): served as stored, no core form signed`)
        texts.push(core.step === 'shape' ? jsonOrNull(row.httpJson) : row.httpJson)
        continue
      }
      texts.push(row.httpJson)
    }
    return { texts, unverified }
  }
}

/**
 * A core form stored before core receipts got their own content-addressed id (spec 03) carries the
 * HttpReceipt's id, and no longer verifies: it is served as if it were missing (computed again, or
 * the HTTP form). Recognized by that id, which a current core form never carries.
 */
export function isLegacyCoreForm(coreJson: string, httpReceiptId: string): boolean {
  return coreJson.includes(`"id":"${httpReceiptId}"`)
}

function buildResult(totalCount: number, nextCursor: number | null, served: ServedReceipts): ReceiptQueryResult {
  const { texts, unverified } = served
  return {
    json: `{"totalCount":${totalCount},"nextCursor":${nextCursor === null ? 'null' : nextCursor},"receipts":[${texts.join(',')}]${unverifiedMember(unverified)}}`,
    totalCount,
    nextCursor,
    receipts: texts,
    unverified,
  }
}

/** The additive `unverifiedReceipts` member (with its leading comma), or '' when there is none. */
export function unverifiedMember(unverified: readonly UnverifiedReceipt[]): string {
  return unverified.length === 0 ? '' : `,"unverifiedReceipts":${JSON.stringify(unverified)}`
}

/** `text` when it is JSON, else `null`: a stored text that is not JSON would break the response around it. */
export function jsonOrNull(text: string | null): string {
  if (text === null) return 'null'
  try {
    JSON.parse(text)
    return text
  } catch {
    return 'null'
  }
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}
