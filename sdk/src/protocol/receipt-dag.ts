// The receipt DAG (spec 03, "Receipt DAG"): the receipts of one agent session carry `chainId`, sorted
// deduplicated `parentReceiptIds`, `parentSetHash` (Gate: the SHA-256 of the canonical JSON of that
// sorted array), `dagOrdinal` and the hybrid logical clock `hlc` (`{wallSeconds, logical, kernelId}`).
// They are top-level members of the signed body (an additive field, spec 03), so the content-addressed
// id and the signature cover them. A child is rejected unless its parent set matches, every parent
// shares its `chainId`, and its `dagOrdinal` exceeds the parents' maximum. Never throws.
import type { HybridLogicalClock } from '../types.js'
import { canonicalJson } from './canonical-json.js'
import { isSha256Hex } from './hex.js'
import { sha256Hex } from './sha256.js'

/** The lineage members of a receipt. */
export interface LineageFields {
  chainId: string
  parentReceiptIds: string[]
  parentSetHash: string
  dagOrdinal: number
  hlc: HybridLogicalClock
}

/** A receipt as its children's checks see it. */
export interface LineageNode {
  id: string
  chainId: string
  dagOrdinal: number
}

/** Which rule a receipt breaks. */
export type LineageRule = 'shape' | 'parent_set' | 'unknown_parent' | 'chain' | 'ordinal'

export interface LineageProblem {
  rule: LineageRule
  detail: string
}

const LINEAGE_MEMBERS = ['chainId', 'parentReceiptIds', 'parentSetHash', 'dagOrdinal', 'hlc'] as const

/** The sorted, deduplicated form of a parent set. */
export function normalizeParentIds(ids: Iterable<string>): string[] {
  return [...new Set(ids)].sort()
}

/** `parentSetHash` of a parent set: SHA-256 hex of the canonical JSON of its sorted, deduplicated ids. */
export function parentSetHash(ids: Iterable<string>): string {
  return sha256Hex(canonicalJson(normalizeParentIds(ids)))
}

/** True when a receipt carries any lineage member (one carrying some must carry all). */
export function hasLineage(receipt: Record<string, unknown>): boolean {
  return LINEAGE_MEMBERS.some(m => receipt[m] !== undefined)
}

/** The lineage members of `receipt`, or the problem with them (shape, then the parent set). */
export function readLineage(receipt: Record<string, unknown>): LineageFields | LineageProblem {
  const { chainId, parentReceiptIds: ids, parentSetHash: hash, dagOrdinal, hlc } = receipt
  if (typeof chainId !== 'string' || chainId === '' || chainId.length > 256) return shape('chainId must be a non-empty string of at most 256 characters')
  if (!Array.isArray(ids) || !ids.every(isSha256Hex)) return shape('parentReceiptIds must be an array of 64-hex receipt ids')
  if (!isSha256Hex(hash)) return shape('parentSetHash must be 64 lowercase hex')
  if (!Number.isSafeInteger(dagOrdinal) || (dagOrdinal as number) < 0) return shape('dagOrdinal must be a non-negative integer')
  const clock = hlc as Record<string, unknown> | undefined
  if (
    typeof clock !== 'object' ||
    clock === null ||
    Object.keys(clock).length !== 3 ||
    !Number.isSafeInteger(clock.wallSeconds) ||
    (clock.wallSeconds as number) < 0 ||
    !Number.isSafeInteger(clock.logical) ||
    (clock.logical as number) < 0 ||
    typeof clock.kernelId !== 'string' ||
    clock.kernelId === ''
  ) {
    return shape('hlc must be {wallSeconds, logical, kernelId}')
  }
  const normalized = normalizeParentIds(ids as string[])
  if (normalized.length !== ids.length || normalized.some((id, i) => id !== ids[i])) {
    return { rule: 'parent_set', detail: 'parentReceiptIds must be sorted and deduplicated' }
  }
  if (parentSetHash(normalized) !== hash) return { rule: 'parent_set', detail: 'parentSetHash is not the hash of parentReceiptIds' }
  return { chainId, parentReceiptIds: normalized, parentSetHash: hash as string, dagOrdinal: dagOrdinal as number, hlc: clock as unknown as HybridLogicalClock }
}

/**
 * Checks a receipt's lineage against its parents (spec 03): the parent set matches, every parent is
 * known and on the receipt's chain, and `dagOrdinal` exceeds theirs. `parents` finds a parent by id;
 * `allowUnknown` accepts parents it cannot find (the other rules still hold for those it finds).
 */
export function checkLineage(
  receipt: Record<string, unknown>,
  parents: (id: string) => LineageNode | undefined,
  options: { allowUnknown?: boolean } = {},
): LineageProblem | undefined {
  const fields = readLineage(receipt)
  if ('rule' in fields) return fields
  let highest = -1
  for (const id of fields.parentReceiptIds) {
    const parent = parents(id)
    if (parent === undefined) {
      if (options.allowUnknown === true) continue
      return { rule: 'unknown_parent', detail: `parent ${id} is not known here` }
    }
    if (parent.chainId !== fields.chainId) return { rule: 'chain', detail: `parent ${id} is on chain ${JSON.stringify(parent.chainId)}, not ${JSON.stringify(fields.chainId)}: parents must share the receipt's chain` }
    highest = Math.max(highest, parent.dagOrdinal)
  }
  if (fields.parentReceiptIds.length > 0 && fields.dagOrdinal <= highest) {
    return { rule: 'ordinal', detail: `dagOrdinal ${fields.dagOrdinal} does not exceed its parents' maximum ${highest}` }
  }
  return undefined
}

/** One receipt of a lineage to verify: its id (already verified by its own check) and its members. */
export interface LineageMember {
  id: string
  receipt: Record<string, unknown>
}

/**
 * Verifies a whole lineage: every member carries lineage members, all on one chain, and each passes
 * `checkLineage` against the others (a parent outside the set is `unknown_parent`). Ids and signatures
 * are the caller's to check first. Returns each failing member with its problem.
 */
export function verifyLineage(members: readonly LineageMember[]): { ok: boolean; chainId: string | undefined; problems: { id: string; problem: LineageProblem }[] } {
  const nodes = new Map<string, LineageNode>()
  const problems: { id: string; problem: LineageProblem }[] = []
  let chainId: string | undefined
  for (const m of members) {
    const fields = readLineage(m.receipt)
    if ('rule' in fields) {
      problems.push({ id: m.id, problem: fields })
      continue
    }
    chainId ??= fields.chainId
    nodes.set(m.id, { id: m.id, chainId: fields.chainId, dagOrdinal: fields.dagOrdinal })
  }
  for (const m of members) {
    if (!nodes.has(m.id)) continue
    const problem = checkLineage(m.receipt, id => nodes.get(id))
    if (problem !== undefined) problems.push({ id: m.id, problem })
    else if (nodes.get(m.id)!.chainId !== chainId) problems.push({ id: m.id, problem: { rule: 'chain', detail: `on chain ${JSON.stringify(nodes.get(m.id)!.chainId)}, not ${JSON.stringify(chainId)}` } })
  }
  return { ok: problems.length === 0 && members.length > 0, chainId, problems }
}

function shape(detail: string): LineageProblem {
  return { rule: 'shape', detail }
}
