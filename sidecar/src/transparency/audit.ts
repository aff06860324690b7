// `gate receipt audit`: recomputes the tree from the stored receipts and checks it against every
// signed checkpoint, the store's own and any the auditor pins from outside the file, and checks every
// row on its own (audit-receipts.ts). One run reports every finding, each with the first bad leaf
// index the evidence establishes; a run of rows with the same problem is one finding (audit-findings.ts):
//   missing_row      seqs are skipped: the rows at those indexes were deleted
//   altered_row      the row fails its own checks: its signed form (id, signature, the id column), its
//                    stored core form, or a filter column that disagrees with the signed receipt
//                    (skipped by treeOnly)
//   reordered_row    the row holds a receipt the tree recorded at another index
//   leaf_mismatch    the row's id differs from the leaf the tree recorded when it was committed
//   root_mismatch    the recomputed root at a checkpoint's size differs from the signed root
//   rolled_back      a checkpoint covers more receipts than the store holds (the file, or its tail, went
//                    back to an older state); the first missing index is the store's receipt count
//   checkpoint       a stored or pinned statement fails its signature, signer, chain or log id
// Deleted rows do not stop the scan: the tree goes on with the leaves it recorded for them, so the rows
// after a deletion are still compared index by index. A root mismatch is localized through the stored
// leaf hashes only when those reproduce the signed root themselves (so they are authentic); otherwise
// the finding gives the range between the last matching checkpoint and the failing one.
import {
  bytesToHex,
  chainProblem,
  CompactMerkleTree,
  hashesEqual,
  receiptLeafHash,
  rootAt,
  verifyCheckpointStatement,
  type CheckpointStatement,
} from '@gate/sdk'
import { AuditFindings, type AuditFinding, type RowProblem } from './audit-findings.js'
import { checkAuditedRows } from './audit-receipts.js'
import type { TransparencyLogBackend } from '@gate/trust'

export { describeFinding, type AuditFinding, type AuditFindingKind } from './audit-findings.js'

export interface AuditReport {
  ok: boolean
  /** The smallest index any finding names, null when none. */
  firstBadIndex: number | null
  receipts: number
  treeSize: number
  checkpoints: { stored: number; pinned: number; matched: number }
  /** False when no trusted key was given: signatures were checked, signers not. */
  signersTrusted: boolean
  receiptChecks: 'full' | 'skipped'
  findings: AuditFinding[]
}

export interface AuditOptions {
  backend: TransparencyLogBackend
  trustedKeys: readonly string[]
  /** Statements kept outside the store (a --checkpoint-copy file, trust-control's newest). */
  pinned?: readonly unknown[]
  /** Skip the per-row checks (signed forms, columns): the tree alone. */
  treeOnly?: boolean
  /** Receipts read per step, default 4096. */
  batchSize?: number
}

type Target = { statement: CheckpointStatement; source: string }

export async function auditLog(options: AuditOptions): Promise<AuditReport> {
  const { backend } = options
  const trusted = options.trustedKeys.length > 0
  const findings = new AuditFindings()
  const logId = await backend.logId()
  const treeSize = await backend.treeSize()
  const targets = new Map<number, Target[]>()
  const addTarget = (statement: CheckpointStatement, source: string) => {
    const list = targets.get(statement.tree_size) ?? []
    list.push({ statement, source })
    targets.set(statement.tree_size, list)
  }

  // (1) the store's checkpoints: signatures, signers, one chain, one log
  const stored: CheckpointStatement[] = []
  for (let after = -1; ; ) {
    const page = await backend.checkpoints(after, 1000)
    if (page.length === 0) break
    stored.push(...page)
    after = page[page.length - 1]!.tree_size
  }
  let previous: CheckpointStatement | undefined
  for (const statement of stored) {
    const check = verifyCheckpointStatement(statement, { trustedKeys: options.trustedKeys, requireTrusted: trusted })
    if (!check.ok) findings.add('checkpoint', null, `stored checkpoint ${statement.tree_size}: ${check.step}: ${check.reason}`)
    else if (statement.log_id !== logId) findings.add('checkpoint', null, `stored checkpoint ${statement.tree_size} names log ${statement.log_id}, the store is log ${logId}`)
    else {
      const link = previous === undefined ? (statement.chain_root === undefined ? undefined : 'the first checkpoint carries a chain_root: earlier checkpoints were removed') : chainProblem(previous, statement)
      if (link !== undefined) findings.add('checkpoint', null, `stored checkpoint ${statement.tree_size}: ${link}`)
      addTarget(statement, 'stored')
    }
    previous = statement
  }
  // (2) pinned statements: the reference from outside the file
  let pinnedCount = 0
  for (const [i, value] of (options.pinned ?? []).entries()) {
    const check = verifyCheckpointStatement(value, { trustedKeys: options.trustedKeys, requireTrusted: trusted })
    if (!check.ok) {
      findings.add('checkpoint', null, `pinned checkpoint #${i + 1}: ${check.step}: ${check.reason}`)
      continue
    }
    pinnedCount++
    if (check.statement.log_id !== logId) {
      findings.add('checkpoint', 0, `pinned checkpoint #${i + 1} is of log ${check.statement.log_id}, the store is log ${logId}: the store was replaced`)
      continue
    }
    addTarget(check.statement, 'pinned')
  }

  // (3) one pass over the receipts in seq order; every row is checked, whatever came before it
  const replay = new TreeReplay(backend, targets, findings)
  const batchSize = options.batchSize ?? 4096
  let receipts = 0
  for (let after = 0; ; ) {
    const rows = await backend.auditedReceiptsAfter(after, batchSize)
    if (rows.length === 0) break
    const base = replay.tree.size
    const last = rows[rows.length - 1]!.seq - 1
    // the leaves the tree recorded for every index of this batch, deleted rows' included
    const recorded = base < treeSize ? await backend.leafHashesFrom(base, Math.min(last, treeSize - 1) - base + 1) : []
    const checks = options.treeOnly ? [] : await checkAuditedRows(rows, options.trustedKeys)
    let around: Map<string, number> | undefined
    const recordedAt = async (leaf: Uint8Array) => (around ??= await recordedAround(backend, base, last, batchSize)).get(bytesToHex(leaf))
    for (const [k, row] of rows.entries()) {
      const index = row.seq - 1
      if (index > replay.tree.size) {
        // deleted rows: reported once, and the tree goes on with the leaves it recorded for them, so
        // what follows is still compared index by index
        const from = replay.tree.size
        findings.row('missing_row', from, gapProblem(from, row.seq), index - from)
        for (let i = from; i < index; i++) {
          const leaf = recorded[i - base]
          if (leaf === undefined) replay.firstLeafMismatch ??= i
          await replay.append(leaf ?? UNKNOWN_LEAF)
        }
      }
      receipts++
      const problem = checks[k]
      if (problem !== undefined) findings.row('altered_row', index, problem)
      const stored = recorded[index - base]
      let leaf: Uint8Array
      try {
        leaf = receiptLeafHash(row.receiptId)
      } catch {
        if (problem === undefined) findings.row('altered_row', index, { key: 'receipt_id column', detail: `seq ${row.seq}: receipt_id is not 64 lowercase hex characters`, note: 'every row of the run: receipt_id column' })
        replay.firstLeafMismatch ??= index
        await replay.append(stored ?? UNKNOWN_LEAF)
        continue
      }
      if (stored !== undefined && !hashesEqual(stored, leaf)) {
        replay.firstLeafMismatch ??= index
        // an altered row is reported as such; its leaf differing follows from that
        if (problem === undefined) {
          const at = await recordedAt(leaf)
          if (at === undefined) findings.row('leaf_mismatch', index, { key: 'leaf', detail: `seq ${row.seq} holds receipt ${row.receiptId}, not the one the tree recorded at this index`, note: 'no row of the run holds the receipt the tree recorded at its index' })
          else findings.row('reordered_row', index, movedProblem(row.seq, row.receiptId, index, at))
        }
      }
      await replay.append(leaf)
    }
    after = rows[rows.length - 1]!.seq
  }

  // (4) what the store no longer holds
  const covered = Math.max(treeSize, ...[...targets.keys()])
  if (covered > replay.tree.size) {
    const size = replay.tree.size
    const by = [...targets.entries()].filter(([n]) => n > size).flatMap(([, list]) => list.map(t => `${t.source} checkpoint ${t.statement.tree_size}`))
    findings.add('rolled_back', size, `the store holds ${size} receipts, but ${by.length > 0 ? by.join(', ') : `its tree recorded ${treeSize}`} covered more: receipts from index ${size} on are gone`)
  }
  const list = findings.list()
  const indexes = list.map(f => f.index).filter((i): i is number => i !== null)
  return {
    ok: list.length === 0,
    firstBadIndex: indexes.length === 0 ? null : Math.min(...indexes),
    receipts,
    treeSize,
    checkpoints: { stored: stored.length, pinned: pinnedCount, matched: replay.matched },
    signersTrusted: trusted,
    receiptChecks: options.treeOnly ? 'skipped' : 'full',
    findings: list,
  }
}

// Stands in for a deleted receipt whose leaf the tree never recorded: the roots after it cannot match.
const UNKNOWN_LEAF = new Uint8Array(32)

/** The recomputed tree, checked against every checkpoint at each size it reaches. */
class TreeReplay {
  readonly tree = new CompactMerkleTree()
  /** The first index whose leaf differs from (or is missing beside) the recorded one. */
  firstLeafMismatch: number | undefined
  /** The largest size whose checkpoint matched. */
  lastGood = 0
  matched = 0
  readonly #backend: TransparencyLogBackend
  readonly #targets: ReadonlyMap<number, readonly Target[]>
  readonly #findings: AuditFindings

  constructor(backend: TransparencyLogBackend, targets: ReadonlyMap<number, readonly Target[]>, findings: AuditFindings) {
    this.#backend = backend
    this.#targets = targets
    this.#findings = findings
  }

  async append(leaf: Uint8Array): Promise<void> {
    this.tree.append(leaf)
    for (const target of this.#targets.get(this.tree.size) ?? []) {
      if (bytesToHex(this.tree.root()) === target.statement.root_hash) {
        this.matched++
        this.lastGood = Math.max(this.lastGood, this.tree.size)
        continue
      }
      this.#findings.rootMismatch(await localize(this.#backend, target.statement, this.firstLeafMismatch, this.lastGood), target.statement.tree_size, rootDetail(target, this.firstLeafMismatch, this.lastGood))
    }
  }
}

// Where the tree recorded each leaf near a batch (a batch either side): a row inserted, deleted and
// renumbered, or swapped shows up as a receipt recorded a few indexes away.
async function recordedAround(backend: TransparencyLogBackend, base: number, last: number, reach: number): Promise<Map<string, number>> {
  const from = Math.max(0, base - reach)
  const leaves = await backend.leafHashesFrom(from, last + reach - from + 1)
  return new Map(leaves.map((leaf, i) => [bytesToHex(leaf), from + i]))
}

function gapProblem(from: number, nextSeq: number): RowProblem {
  const count = nextSeq - 1 - from
  return { key: 'gap', detail: `no receipt at seq ${from + 1}${count > 1 ? `–${nextSeq - 1}` : ''} (the next row is seq ${nextSeq}): ${count} row(s) deleted`, note: '' }
}

function movedProblem(seq: number, receiptId: string, index: number, at: number): RowProblem {
  const by = Math.abs(at - index)
  return {
    key: `moved ${at - index}`,
    detail: `seq ${seq} holds receipt ${receiptId}, which the tree recorded at index ${at}`,
    note: `each row of the run holds the receipt the tree recorded ${by} ${by === 1 ? 'index' : 'indexes'} ${at < index ? 'before' : 'after'} its own (rows inserted, deleted or renumbered)`,
  }
}

// The stored leaves are authentic up to `size` only if they rebuild the signed root themselves.
async function localize(backend: TransparencyLogBackend, statement: CheckpointStatement, firstLeafMismatch: number | undefined, lastGood: number): Promise<number> {
  if (firstLeafMismatch === undefined || firstLeafMismatch >= statement.tree_size) return lastGood
  try {
    const storedRoot = await rootAt(statement.tree_size, backend)
    return bytesToHex(storedRoot) === statement.root_hash ? firstLeafMismatch : lastGood
  } catch {
    return lastGood
  }
}

function rootDetail(target: Target, firstLeafMismatch: number | undefined, lastGood: number): string {
  const where =
    firstLeafMismatch !== undefined && firstLeafMismatch < target.statement.tree_size
      ? `the first receipt that differs from the recorded tree is at index ${firstLeafMismatch}`
      : `the bad receipt is at an index in [${lastGood}, ${target.statement.tree_size})`
  return `the receipts do not rebuild the root of ${target.source} checkpoint ${target.statement.tree_size} (${target.statement.root_hash}): ${where}`
}
