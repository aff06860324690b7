// `gate receipt audit`: recomputes the tree from the stored receipts and checks it against every
// signed checkpoint, the store's own and any the auditor pins from outside the file. Findings name the
// first bad leaf index where the evidence allows it:
//   missing_row      a seq is skipped: the row at that index was deleted
//   altered_row      the row fails its own checks: the id column differs from the signed JSON's id, the
//                    id does not recompute from the body, or the signature fails (skipped by treeOnly)
//   reordered_row    the row holds a receipt the tree recorded at another index
//   leaf_mismatch    the row's id differs from the leaf the tree recorded when it was committed
//   root_mismatch    the recomputed root at a checkpoint's size differs from the signed root
//   rolled_back      a checkpoint covers more receipts than the store holds (the file, or its tail, went
//                    back to an older state); the first missing index is the store's receipt count
//   checkpoint       a stored or pinned statement fails its signature, signer, chain or log id
// A root mismatch is localized through the stored leaf hashes only when those reproduce the signed
// root themselves (so they are authentic); otherwise the finding gives the range between the last
// matching checkpoint and the failing one.
import {
  bytesToHex,
  chainProblem,
  checkHttpReceiptOffThread,
  CompactMerkleTree,
  hashesEqual,
  receiptLeafHash,
  rootAt,
  verifyCheckpointStatement,
  verifyCoreReceipt,
  type CheckpointStatement,
} from '@gate/sdk'
import type { AuditedReceipt, TransparencyLogBackend } from './log-backend.js'

export type AuditFindingKind = 'missing_row' | 'altered_row' | 'reordered_row' | 'leaf_mismatch' | 'root_mismatch' | 'rolled_back' | 'checkpoint'

export interface AuditFinding {
  kind: AuditFindingKind
  /** The first bad leaf index this finding establishes (null when it concerns a statement only). */
  index: number | null
  detail: string
}

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
  /** Skip the per-receipt id and signature checks (the tree alone). */
  treeOnly?: boolean
  /** Receipts read per step, default 4096. */
  batchSize?: number
}

// receipt signatures verified at once (the libuv pool runs them in parallel)
const VERIFY_CONCURRENCY = 64

export async function auditLog(options: AuditOptions): Promise<AuditReport> {
  const { backend } = options
  const trusted = options.trustedKeys.length > 0
  const findings: AuditFinding[] = []
  const logId = await backend.logId()
  const treeSize = await backend.treeSize()
  const targets = new Map<number, { statement: CheckpointStatement; source: string }[]>()
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
    if (!check.ok) findings.push({ kind: 'checkpoint', index: null, detail: `stored checkpoint ${statement.tree_size}: ${check.step}: ${check.reason}` })
    else if (statement.log_id !== logId) findings.push({ kind: 'checkpoint', index: null, detail: `stored checkpoint ${statement.tree_size} names log ${statement.log_id}, the store is log ${logId}` })
    else {
      const link = previous === undefined ? (statement.chain_root === undefined ? undefined : 'the first checkpoint carries a chain_root: earlier checkpoints were removed') : chainProblem(previous, statement)
      if (link !== undefined) findings.push({ kind: 'checkpoint', index: null, detail: `stored checkpoint ${statement.tree_size}: ${link}` })
      addTarget(statement, 'stored')
    }
    previous = statement
  }
  // (2) pinned statements: the reference from outside the file
  let pinnedCount = 0
  for (const [i, value] of (options.pinned ?? []).entries()) {
    const check = verifyCheckpointStatement(value, { trustedKeys: options.trustedKeys, requireTrusted: trusted })
    if (!check.ok) {
      findings.push({ kind: 'checkpoint', index: null, detail: `pinned checkpoint #${i + 1}: ${check.step}: ${check.reason}` })
      continue
    }
    pinnedCount++
    if (check.statement.log_id !== logId) {
      findings.push({ kind: 'checkpoint', index: 0, detail: `pinned checkpoint #${i + 1} is of log ${check.statement.log_id}, the store is log ${logId}: the store was replaced` })
      continue
    }
    addTarget(check.statement, 'pinned')
  }

  // (3) one pass over the receipts in seq order
  const tree = new CompactMerkleTree()
  const batchSize = options.batchSize ?? 4096
  let firstLeafMismatch: number | undefined
  let lastGood = 0
  let matched = 0
  let stop = false
  let receipts = 0
  for (let after = 0; !stop; ) {
    const rows = await backend.auditedReceiptsAfter(after, batchSize)
    if (rows.length === 0) break
    const base = tree.size
    const storedLeaves = base < treeSize ? await backend.leafHashesFrom(base, rows.length) : []
    const checks = options.treeOnly ? [] : await checkReceipts(rows, options.trustedKeys)
    for (const [k, row] of rows.entries()) {
      const index = tree.size
      if (row.seq !== index + 1) {
        findings.push({ kind: 'missing_row', index, detail: `no receipt at seq ${index + 1} (the next row is seq ${row.seq}): ${row.seq - index - 1} row(s) deleted` })
        stop = true
        break
      }
      receipts++
      const problem = options.treeOnly ? undefined : receiptProblem(row.receiptId, checks[k]!, trusted)
      if (problem !== undefined) findings.push({ kind: 'altered_row', index, detail: `seq ${row.seq}: ${problem}` })
      let leaf: Uint8Array
      try {
        leaf = receiptLeafHash(row.receiptId)
      } catch {
        findings.push({ kind: 'altered_row', index, detail: `seq ${row.seq}: receipt_id is not 64 lowercase hex characters` })
        stop = true
        break
      }
      const recorded = storedLeaves[k]
      if (recorded !== undefined && !hashesEqual(recorded, leaf)) {
        firstLeafMismatch ??= index
        const elsewhere = storedLeaves.findIndex(h => hashesEqual(h, leaf))
        if (problem === undefined) {
          findings.push(
            elsewhere >= 0
              ? { kind: 'reordered_row', index, detail: `seq ${row.seq} holds receipt ${row.receiptId}, which the tree recorded at index ${base + elsewhere}` }
              : { kind: 'leaf_mismatch', index, detail: `seq ${row.seq} holds receipt ${row.receiptId}, not the one the tree recorded at this index` },
          )
        }
      }
      tree.append(leaf)
      for (const target of targets.get(tree.size) ?? []) {
        if (bytesToHex(tree.root()) === target.statement.root_hash) {
          matched++
          lastGood = Math.max(lastGood, tree.size)
          continue
        }
        findings.push({ kind: 'root_mismatch', index: await localize(backend, target.statement, firstLeafMismatch, lastGood), detail: rootDetail(target, firstLeafMismatch, lastGood) })
      }
    }
    after = rows[rows.length - 1]!.seq
  }

  // (4) what the store no longer holds
  const covered = Math.max(treeSize, ...[...targets.keys()])
  if (!stop && covered > tree.size) {
    const by = [...targets.entries()].filter(([size]) => size > tree.size).flatMap(([, list]) => list.map(t => `${t.source} checkpoint ${t.statement.tree_size}`))
    findings.push({ kind: 'rolled_back', index: tree.size, detail: `the store holds ${tree.size} receipts, but ${by.length > 0 ? by.join(', ') : `its tree recorded ${treeSize}`} covered more: receipts from index ${tree.size} on are gone` })
  }
  const indexes = findings.map(f => f.index).filter((i): i is number => i !== null)
  return {
    ok: findings.length === 0,
    firstBadIndex: indexes.length === 0 ? null : Math.min(...indexes),
    receipts,
    treeSize,
    checkpoints: { stored: stored.length, pinned: pinnedCount, matched },
    signersTrusted: trusted,
    receiptChecks: options.treeOnly ? 'skipped' : 'full',
    findings,
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

function rootDetail(target: { statement: CheckpointStatement; source: string }, firstLeafMismatch: number | undefined, lastGood: number): string {
  const where =
    firstLeafMismatch !== undefined && firstLeafMismatch < target.statement.tree_size
      ? `the first receipt that differs from the recorded tree is at index ${firstLeafMismatch}`
      : `the bad receipt is at an index in [${lastGood}, ${target.statement.tree_size})`
  return `the receipts do not rebuild the root of ${target.source} checkpoint ${target.statement.tree_size} (${target.statement.root_hash}): ${where}`
}

// Each row's signed form: its HttpReceipt, or for a core-only receipt (a tool call's) the core one.
async function checkReceipts(rows: readonly Pick<AuditedReceipt, 'httpJson' | 'coreJson'>[], trustedKeys: readonly string[]) {
  const out: { id: unknown; failedStep: string | null; detail: string }[] = []
  for (let i = 0; i < rows.length; i += VERIFY_CONCURRENCY) {
    const chunk = rows.slice(i, i + VERIFY_CONCURRENCY)
    out.push(
      ...(await Promise.all(
        chunk.map(async row => {
          let receipt: unknown
          try {
            receipt = JSON.parse(row.httpJson ?? row.coreJson ?? '')
          } catch {
            return { id: undefined, failedStep: 'parse', detail: 'stored JSON does not parse' }
          }
          if (row.httpJson === null) {
            const core = verifyCoreReceipt(receipt, { trustedKeys })
            return { id: (receipt as { id?: unknown }).id, failedStep: core.failedStep, detail: core.detail }
          }
          const check = await checkHttpReceiptOffThread(receipt, { trustedKeys })
          return { id: (receipt as { id?: unknown }).id, failedStep: check.failedStep, detail: check.detail ?? '' }
        }),
      )),
    )
  }
  return out
}

function receiptProblem(receiptId: string, check: { id: unknown; failedStep: string | null; detail: string }, trusted: boolean): string | undefined {
  if (check.failedStep === 'parse') return check.detail
  if (check.id !== receiptId) return `the receipt_id column (${receiptId}) differs from the stored receipt's id (${String(check.id)})`
  if (check.failedStep === null || (check.failedStep === 'signer' && !trusted)) return undefined
  return `${check.failedStep}: ${check.detail}`
}
