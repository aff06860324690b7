// The audit's check of each row on its own (audit.ts runs it over every batch, unless --tree-only):
//   - the signed form verifies: its HttpReceipt, or for a core-only row (a tool call's) its core
//     receipt; its id equals the receipt_id column; its signature verifies (against a trusted key when
//     the auditor gave any);
//   - a core form stored beside an HttpReceipt (made on first read) verifies too and is the core form
//     of that receipt (spec 02 mapping), since trust-control serves it as stored;
//   - every filter column equals the value the signed receipt gives it (stores/receipt-columns.ts): a
//     row whose columns were rewritten is altered even though its signed text is untouched.
// A row's problems are one RowProblem; its key says which checks failed, so a run of rows altered
// alike folds into one finding.
import {
  canonicalJson,
  checkHttpReceiptOffThread,
  coreReceiptBody,
  parseJsonExact,
  verifyCoreReceipt,
  type CoreReceipt,
  type HttpReceipt,
} from '@gate/sdk'
import { columnMismatches, isLegacyCoreForm, signedCoreColumns, signedHttpColumns, type AuditedReceipt, type SignedColumns } from '@gate/trust'
import type { RowProblem } from './audit-findings.js'

// receipt signatures verified at once (the libuv pool runs them in parallel)
const VERIFY_CONCURRENCY = 64

/** Each row's problem, or undefined when it holds (same order as `rows`). */
export async function checkAuditedRows(rows: readonly AuditedReceipt[], trustedKeys: readonly string[]): Promise<(RowProblem | undefined)[]> {
  const out: (RowProblem | undefined)[] = []
  for (let i = 0; i < rows.length; i += VERIFY_CONCURRENCY) {
    out.push(...(await Promise.all(rows.slice(i, i + VERIFY_CONCURRENCY).map(row => checkRow(row, trustedKeys)))))
  }
  return out
}

interface Problem {
  key: string
  text: string
}

async function checkRow(row: AuditedReceipt, trustedKeys: readonly string[]): Promise<RowProblem | undefined> {
  const problems = row.httpJson === null ? checkCoreOnly(row, trustedKeys) : await checkHttp(row, row.httpJson, trustedKeys)
  if (problems.length === 0) return undefined
  return {
    key: problems.map(p => p.key).join('+'),
    detail: `seq ${row.seq}: ${problems.map(p => p.text).join('; ')}`,
    note: `every row of the run: ${problems.map(p => p.key).join(', ')}`,
  }
}

async function checkHttp(row: AuditedReceipt, json: string, trustedKeys: readonly string[]): Promise<Problem[]> {
  let receipt: HttpReceipt
  try {
    receipt = JSON.parse(json) as HttpReceipt
  } catch {
    return [{ key: 'signed JSON', text: 'the stored receipt does not parse' }]
  }
  // over the stored bytes themselves when they are canonical (the fast path), as a verifier reads them
  const check = await checkHttpReceiptOffThread(receipt, { trustedKeys, receiptText: json })
  const own = signedFormProblem(row.receiptId, receipt.id, check.failedStep, check.detail ?? '', trustedKeys.length > 0)
  if (own !== undefined) return [own]
  const problems: Problem[] = []
  // a legacy core form (it carries the HTTP id) is never served as stored, so it proves nothing
  if (row.coreJson !== null && !isLegacyCoreForm(row.coreJson, row.receiptId)) {
    const core = coreFormProblem(receipt, row.coreJson, trustedKeys)
    if (core !== undefined) problems.push(core)
  }
  const columns = columnProblem(row, () => signedHttpColumns(receipt))
  if (columns !== undefined) problems.push(columns)
  return problems
}

function checkCoreOnly(row: AuditedReceipt, trustedKeys: readonly string[]): Problem[] {
  let receipt: CoreReceipt
  try {
    // exact numbers: the parameter hash is recomputed over the parameters as signed
    receipt = parseJsonExact(row.coreJson ?? '') as CoreReceipt
  } catch {
    return [{ key: 'signed JSON', text: 'the stored receipt does not parse' }]
  }
  const check = verifyCoreReceipt(receipt, { trustedKeys })
  const own = signedFormProblem(row.receiptId, (receipt as { id?: unknown }).id, check.failedStep, check.detail, trustedKeys.length > 0)
  if (own !== undefined) return [own]
  const columns = columnProblem(row, () => signedCoreColumns(receipt))
  return columns === undefined ? [] : [columns]
}

function signedFormProblem(receiptId: string, id: unknown, failedStep: string | null, detail: string, trusted: boolean): Problem | undefined {
  if (id !== receiptId) return { key: 'receipt_id column', text: `the receipt_id column (${receiptId}) differs from the stored receipt's id (${String(id)})` }
  if (failedStep === null || (failedStep === 'signer' && !trusted)) return undefined
  return { key: failedStep, text: `${failedStep}: ${detail}` }
}

// A core form is served as stored, so it must verify by itself and say what its HttpReceipt says.
function coreFormProblem(receipt: HttpReceipt, coreJson: string, trustedKeys: readonly string[]): Problem | undefined {
  let core: Record<string, unknown>
  try {
    core = parseJsonExact(coreJson) as Record<string, unknown>
  } catch {
    return { key: 'core form', text: 'the stored core form does not parse' }
  }
  const check = verifyCoreReceipt(core, { trustedKeys })
  if (check.failedStep !== null && !(check.failedStep === 'signer' && trustedKeys.length === 0)) {
    return { key: 'core form', text: `the stored core form fails at ${check.failedStep}: ${check.detail}` }
  }
  const { id: _id, signature: _signature, bbs_signature: _bbs, ...body } = core
  let expected: string
  try {
    expected = canonicalJson(coreReceiptBody(receipt, (core.algorithm as 'p256' | 'p384' | undefined) ?? 'ed25519'))
  } catch (err) {
    return { key: 'core form', text: `the core form of the signed receipt cannot be made: ${(err as Error).message}` }
  }
  if (canonicalJson(body) !== expected) return { key: 'core form', text: 'the stored core form is not the core form of the signed receipt' }
  return undefined
}

function columnProblem(row: AuditedReceipt, signed: () => SignedColumns): Problem | undefined {
  let expected: SignedColumns
  try {
    expected = signed()
  } catch (err) {
    return { key: 'columns', text: `the signed receipt gives no column values: ${(err as Error).message}` }
  }
  const wrong = columnMismatches(row, expected)
  if (wrong.length === 0) return undefined
  return {
    key: `columns ${wrong.map(w => w.column).join(',')}`,
    text: wrong.map(w => `the ${w.column} column is ${JSON.stringify(w.stored)}, the signed receipt says ${JSON.stringify(w.signed)}`).join('; '),
  }
}
