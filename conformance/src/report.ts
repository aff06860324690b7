// The run's result: one row per check, a summary, and the two output forms (table, JSON).
import type { CheckDefinition, CheckResultKind } from './check.js'

export interface CheckResult {
  id: string
  description: string
  specRef: string
  required: boolean
  result: CheckResultKind
  /** Why it failed or was skipped; null when it passed. */
  detail: string | null
  durationMs: number
}

export interface Report {
  sidecarUrl: string
  /** The OpenAPI document the expectations came from. */
  spec: string
  startedAt: string
  durationMs: number
  results: CheckResult[]
  /** What the sidecar under test lacked, when checks failed or were skipped for want of it (its document, its control token). */
  needs: string[]
  summary: { passed: number; failed: number; skipped: number; requiredFailed: number }
  /** False when any required check failed. */
  ok: boolean
}

/** The summary and roll-up of a list of results. */
export function summarize(results: readonly CheckResult[]): Pick<Report, 'summary' | 'ok'> {
  const count = (kind: CheckResultKind) => results.filter(r => r.result === kind).length
  const requiredFailed = results.filter(r => r.result === 'FAIL' && r.required).length
  return { summary: { passed: count('PASS'), failed: count('FAIL'), skipped: count('SKIP'), requiredFailed }, ok: requiredFailed === 0 }
}

/** A result row for a check that did not run its body. */
export function resultOf(check: CheckDefinition, result: CheckResultKind, detail: string | null, durationMs: number): CheckResult {
  return { id: check.id, description: check.description, specRef: check.specRef, required: check.required, result, detail, durationMs }
}

/** The readable table: id, result, description, spec reference, and the detail under failed/skipped rows. */
export function formatTable(report: Report): string {
  const idWidth = Math.max(...report.results.map(r => r.id.length), 2)
  const lines: string[] = [`Gate conformance against ${report.sidecarUrl} (spec: ${report.spec})`, '']
  lines.push(`${'ID'.padEnd(idWidth)}  RESULT  DESCRIPTION`)
  for (const r of report.results) {
    lines.push(`${r.id.padEnd(idWidth)}  ${r.result.padEnd(6)}  ${r.description}`)
    lines.push(`${''.padEnd(idWidth)}          spec: ${r.specRef}${r.required ? '' : ' (advisory)'}`)
    if (r.detail !== null) lines.push(`${''.padEnd(idWidth)}          ${r.result === 'SKIP' ? 'skipped' : 'failure'}: ${r.detail}`)
  }
  const s = report.summary
  lines.push('')
  // plain words: "0 failed (0 required)" read as a count of required checks
  const failed = s.failed === 0 ? 'none failed' : `${s.failed} failed (${s.requiredFailed} required, ${s.failed - s.requiredFailed} advisory)`
  lines.push(`${s.passed} passed, ${failed}, ${s.skipped} skipped in ${(report.durationMs / 1000).toFixed(1)} s`)
  if (s.failed > s.requiredFailed) lines.push('(advisory) checks test Gate\'s documented choices where the spec is silent; their failures do not change the exit code')
  if (report.needs.length > 0) {
    lines.push('', 'The sidecar under test needs:')
    for (const need of report.needs) lines.push(`  - ${need}`)
    lines.push('')
  }
  lines.push(report.ok ? 'CONFORMANT (every required check passed or was skipped)' : 'NOT CONFORMANT')
  return lines.join('\n') + '\n'
}

/** The JSON form (`--json`). */
export function formatJson(report: Report): string {
  return JSON.stringify(report, null, 2) + '\n'
}
