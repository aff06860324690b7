// The findings of `gate receipt audit` (audit.ts), collected so that one tamper reads as one line: a
// run of consecutive rows with the same problem (a row inserted mid-log shifts every later row by one;
// an UPDATE over a range alters each row of it alike) is one finding with its first and last index,
// and the checkpoints one bad receipt breaks are one finding with their count. Every finding is still
// reported: only identical neighbours are folded together.

export type AuditFindingKind = 'missing_row' | 'altered_row' | 'reordered_row' | 'leaf_mismatch' | 'root_mismatch' | 'rolled_back' | 'checkpoint'

export interface AuditFinding {
  kind: AuditFindingKind
  /** The first bad leaf index this finding establishes (null when it concerns a statement only). */
  index: number | null
  /** The last leaf index of a run of rows (equal to `index` for one row or a non-row finding). */
  lastIndex: number | null
  /** How many rows (checkpoints, for root_mismatch; 1 for a statement) the finding stands for. */
  count: number
  /** What is wrong; for a run, its first row's problem and what every row of the run shares. */
  detail: string
}

/** One row's problem: rows with equal `key` at consecutive indexes fold into one finding, described by `note`. */
export interface RowProblem {
  key: string
  detail: string
  /** What every row of a run has in common (used once the run has more than one row). */
  note: string
}

interface OpenRun {
  finding: AuditFinding
  key: string
  note: string
  firstDetail: string
}

/** Collects findings in scan order, folding runs; `list()` orders them by index (statements first). */
export class AuditFindings {
  readonly #closed: AuditFinding[] = []
  readonly #open = new Map<string, OpenRun>()

  /** A problem of `count` consecutive rows from `index` (a gap of deleted rows is one call). */
  row(kind: AuditFindingKind, index: number, problem: RowProblem, count = 1): void {
    const open = this.#open.get(kind)
    if (open !== undefined && open.key === problem.key && open.finding.lastIndex === index - 1) {
      open.finding.lastIndex = index + count - 1
      open.finding.count += count
      return
    }
    if (open !== undefined) this.#close(kind, open)
    this.#open.set(kind, { finding: { kind, index, lastIndex: index + count - 1, count, detail: '' }, key: problem.key, note: problem.note, firstDetail: problem.detail })
  }

  /**
   * A checkpoint whose root the receipts do not rebuild: consecutive ones that point at the same first
   * bad index are one finding (`detail` of the first, the count, the last size).
   */
  rootMismatch(index: number, checkpointSize: number, detail: string): void {
    const open = this.#open.get('root_mismatch')
    if (open !== undefined && open.finding.index === index) {
      open.finding.count++
      open.note = `${open.finding.count} checkpoints, the last of size ${checkpointSize}, fail alike`
      return
    }
    if (open !== undefined) this.#close('root_mismatch', open)
    this.#open.set('root_mismatch', { finding: { kind: 'root_mismatch', index, lastIndex: index, count: 1, detail: '' }, key: String(index), note: '', firstDetail: detail })
  }

  /** A finding that stands alone (a statement, the tail gone). */
  add(kind: AuditFindingKind, index: number | null, detail: string): void {
    this.#closed.push({ kind, index, lastIndex: index, count: 1, detail })
  }

  /** Every finding, runs closed, ordered by first index (statement findings first, then scan order). */
  list(): AuditFinding[] {
    for (const [kind, open] of [...this.#open]) this.#close(kind, open)
    return this.#closed.map((f, order) => ({ f, order })).sort((a, b) => (a.f.index ?? -1) - (b.f.index ?? -1) || a.order - b.order).map(x => x.f)
  }

  #close(kind: string, open: OpenRun): void {
    this.#open.delete(kind)
    open.finding.detail = open.finding.count > 1 && open.note !== '' ? `${open.firstDetail}; ${open.note}` : open.firstDetail
    this.#closed.push(open.finding)
  }
}

/** How a finding reads on one line of `gate receipt audit`'s report. */
export function describeFinding(f: AuditFinding): string {
  let where = ''
  if (f.index !== null) {
    if (f.kind === 'root_mismatch' && f.count > 1) where = ` at index ${f.index}`
    else if (f.lastIndex !== null && f.lastIndex !== f.index) where = ` at indexes ${f.index}–${f.lastIndex} (${f.count.toLocaleString('en-US')} rows)`
    else where = ` at index ${f.index}`
  }
  return `${f.kind}${where}: ${f.detail}`
}
