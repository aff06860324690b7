// The receipt lineage trust-control keeps (spec 03, "Receipt DAG"; docs/receipts.md): the receipts of
// one chain, core receipts from the receipt log, tool receipts (core receipts too) and child receipts
// from the listed receipts, each
// verified (a core receipt's id and signature, a child's content-addressed id) and the whole checked
// with the DAG's rules; and the parents of a receipt arriving from outside, so that a child whose
// parent set does not match, whose parents span chains or whose ordinal does not exceed theirs is
// refused before it is stored (POST /v1/receipts/children and /tools).
import { canonicalJson, checkLineage, hasLineage, readLineage, sha256Hex, verifyCoreReceipt, verifyLineage, type LineageNode, type LineageProblem } from '@gate/sdk'
import type { ListedReceiptPort, ReceiptCorpusPort } from './ports.js'

/** Where the receipts of a chain are read. */
export interface LineageSources {
  corpus: Pick<ReceiptCorpusPort, 'getById' | 'listChain'>
  listed: Pick<ListedReceiptPort, 'list'>
}

/** One receipt of a chain, served exactly as stored. */
export interface ChainMember {
  receiptId: string
  kind: 'core' | 'child'
  seq: number
  json: string
  receipt: Record<string, unknown>
}

/** A member that does not verify, and why (its own check, or a DAG rule). */
export interface ChainProblem {
  receiptId: string
  step: string
  detail: string
}

export interface ChainView {
  chainId: string
  members: ChainMember[]
  /** More receipts than `limit` are on the chain: the lineage read is incomplete (and so not verified). */
  truncated: boolean
  verified: boolean
  problems: ChainProblem[]
}

/** The chain a stored receipt (core or child) is on; undefined when it is not stored or on none. */
export async function chainIdOf(sources: LineageSources, receiptId: string): Promise<string | undefined> {
  const member = (await loadMember(sources, receiptId))?.receipt
  return typeof member?.chainId === 'string' ? member.chainId : undefined
}

/**
 * The receipts of chain `chainId` (at most `limit` of each kind), in DAG order (ordinal, then seq), each
 * verified (signatures, not signers: `gate receipt verify --trusted-key` checks who signed) and the
 * whole lineage checked.
 */
export async function loadChain(sources: LineageSources, chainId: string, limit: number): Promise<ChainView> {
  const [core, tools, children] = await Promise.all([
    sources.corpus.listChain(chainId, limit + 1),
    sources.listed.list('tool', { chainId }, limit + 1),
    sources.listed.list('child', { chainId }, limit + 1),
  ])
  const truncated = core.length > limit || tools.length > limit || children.length > limit
  const members: ChainMember[] = []
  for (const row of core.slice(0, limit)) members.push({ receiptId: row.receiptId, kind: 'core', seq: row.seq, json: row.coreJson!, receipt: JSON.parse(row.coreJson!) as Record<string, unknown> })
  // an appended tool receipt is a core receipt; listed seqs are their own sequence, after the log's
  for (const row of tools.slice(0, limit)) members.push({ receiptId: row.receiptId, kind: 'core', seq: Number.MAX_SAFE_INTEGER / 2 + row.seq, json: row.json, receipt: JSON.parse(row.json) as Record<string, unknown> })
  for (const row of children.slice(0, limit)) members.push({ receiptId: row.receiptId, kind: 'child', seq: row.seq, json: row.json, receipt: JSON.parse(row.json) as Record<string, unknown> })
  return checkChain(chainId, members, truncated ? limit : undefined)
}

/**
 * Verifies the members of chain `chainId` as read (each receipt's own check, then the DAG's rules) and
 * orders them (ordinal, then seq). `truncatedAt`: the read stopped at that many of a kind.
 */
export function checkChain(chainId: string, read: readonly ChainMember[], truncatedAt?: number): ChainView {
  const members = [...read]
  const problems: ChainProblem[] = []
  for (const m of members) {
    const own = memberProblem(m)
    if (own !== undefined) problems.push({ receiptId: m.receiptId, ...own })
  }
  for (const p of verifyLineage(members.map(m => ({ id: m.receiptId, receipt: m.receipt }))).problems) {
    problems.push({ receiptId: p.id, step: p.problem.rule, detail: p.problem.detail })
  }
  if (members.some(m => m.receipt.chainId !== chainId)) problems.push({ receiptId: '', step: 'chain', detail: `a member is not on chain ${JSON.stringify(chainId)}` })
  const truncated = truncatedAt !== undefined
  if (truncated) problems.push({ receiptId: '', step: 'truncated', detail: `more than ${truncatedAt} receipts: the lineage was not read whole` })
  members.sort((a, b) => ordinalOf(a) - ordinalOf(b) || a.seq - b.seq)
  return { chainId, members, truncated, verified: problems.length === 0 && members.length > 0, problems }
}

/**
 * Checks the lineage of a receipt arriving from outside against its parents as stored here (and, for
 * an ingest batch, those in `alsoKnown`). A receipt without lineage members passes. `allowUnknown`
 * accepts parents not found (ingest: sidecars do not ship child receipts), the other rules still
 * applying to those found.
 */
export async function checkIncomingLineage(
  sources: LineageSources,
  receipt: Record<string, unknown>,
  options: { allowUnknown?: boolean; alsoKnown?: ReadonlyMap<string, LineageNode> } = {},
): Promise<LineageProblem | undefined> {
  if (!hasLineage(receipt)) return undefined
  const fields = readLineage(receipt)
  if ('rule' in fields) return fields
  const parents = new Map<string, LineageNode>()
  for (const id of fields.parentReceiptIds) {
    const known = options.alsoKnown?.get(id) ?? nodeOf(id, (await loadMember(sources, id))?.receipt)
    if (known !== undefined) parents.set(id, known)
  }
  return checkLineage(receipt, id => parents.get(id), { allowUnknown: options.allowUnknown })
}

/** The DAG node of a receipt, when it carries a chain. */
export function nodeOf(id: string, receipt: Record<string, unknown> | undefined): LineageNode | undefined {
  if (receipt === undefined || typeof receipt.chainId !== 'string' || !Number.isSafeInteger(receipt.dagOrdinal)) return undefined
  return { id, chainId: receipt.chainId, dagOrdinal: receipt.dagOrdinal as number }
}

// a core-only receipt from the log (an HTTP receipt carries no chain), else a child or tool receipt
async function loadMember(sources: LineageSources, receiptId: string): Promise<{ receipt: Record<string, unknown> } | undefined> {
  const row = await sources.corpus.getById(receiptId)
  const listed = async () => (await sources.listed.list('child', { receiptId }, 1))[0]?.json ?? (await sources.listed.list('tool', { receiptId }, 1))[0]?.json
  const text = row === undefined ? await listed() : row.httpJson === null ? row.coreJson : null
  if (text === undefined || text === null) return undefined
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? { receipt: value as Record<string, unknown> } : undefined
  } catch {
    return undefined
  }
}

// a core receipt: its own spec 02 order (semantics, id, signature); a child: its content address
function memberProblem(m: ChainMember): { step: string; detail: string } | undefined {
  if (m.kind === 'core') {
    const check = verifyCoreReceipt(m.receipt, { trustedKeys: [] })
    if (check.signature_valid && check.receipt_id_valid && m.receipt.id === m.receiptId) return undefined
    return { step: check.failedStep ?? 'receipt_id', detail: check.signature_valid ? 'the stored row names another receipt id' : check.detail }
  }
  const { id, ...body } = m.receipt
  let expected: string
  try {
    expected = sha256Hex(canonicalJson(body))
  } catch (err) {
    return { step: 'receipt_id', detail: `it has no canonical JSON form: ${(err as Error).message}` }
  }
  // a child appended without an id is stored as sent, under the id computed from it
  return (id === undefined || id === expected) && expected === m.receiptId ? undefined : { step: 'receipt_id', detail: 'id is not the SHA-256 of the canonical receipt without id' }
}

function ordinalOf(m: ChainMember): number {
  return typeof m.receipt.dagOrdinal === 'number' ? m.receipt.dagOrdinal : Number.MAX_SAFE_INTEGER
}
