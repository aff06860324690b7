// `gate receipt explain ID`: one receipt in words, from the receipt file (--receipt-db) or trust-control's
// point load (--control-url, GET /v1/receipts/{id}), with whether it verifies: trust-control's
// verdict when it refused the receipt's core form (`unverifiedReceipts`, docs/trust-control.md), and
// this command's own check of the form it describes (semantics, the receipt's id against the one asked
// for and its recomputation, the signature; the signer is not checked here: `gate receipt verify
// --trusted-key`). Exit 1 when it does not verify. Everything printed from a receipt goes through
// terminal-text.ts.
import { canonicalJson, describeUnixTime, readJson, EXACT_JSON_LIMITS, type CoreReceipt, type GuardEvidence, type HttpReceipt } from '@gate/sdk'
import { checkStoredReceipt, readStoredReceipt, type StoredReceipt, type StoredReceiptText, type UnverifiedReceipt } from '@gate/trust'
import { UsageError } from '../errors.js'
import { GLOBAL_FLAG_OPTIONS, readGlobalFlags } from '../config/global-flags.js'
import { createControlClient, describeRefusal } from './control-client.js'
import { parseFlags } from './parse-flags.js'
import { explainLineage } from './receipt-lineage.js'
import { errorOf, openExistingStore, SOURCE_HELP } from './receipt-source.js'
import { escapeControls } from './terminal-text.js'
import { chooseLogSource } from './transparency-source.js'

export const EXPLAIN_USAGE = `Usage: gate receipt explain ID (--receipt-db PATH | --control-url URL)
       gate receipt explain --lineage ID (--receipt-db PATH | --control-url URL)

Prints one receipt in words: verdict, route, caller hash, capability, guards and their evidence, status,
times, the decision/final linkage, and whether it verifies ("not verified" and the failing step:
semantics, receipt_id, signature or signer). Exit 1 when it does not.

--lineage ID prints the receipt DAG of the agent session receipt ID belongs to (its chain: tool-call
decisions and finals, child receipts of sampling and other relayed requests) as a tree, each receipt
under the receipts it follows from, and whether the lineage verifies (each receipt's id and signature,
parent sets, one chain, ordinals). Exit 1 when it does not.

${SOURCE_HELP}`

/** Runs `gate receipt explain` (argv after the verb); the exit code. */
export async function explain(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...GLOBAL_FLAG_OPTIONS, lineage: { type: 'string' } }, true)
  if (values.help === true) {
    process.stdout.write(EXPLAIN_USAGE + '\n')
    return 0
  }
  if (typeof values.lineage === 'string') {
    if (positionals.length !== 0) throw new UsageError('--lineage takes the receipt ID; give no other')
    if (!/^[0-9a-f]{64}$/.test(values.lineage)) throw new UsageError(`a receipt ID is 64 lowercase hex characters, got "${values.lineage}"`)
    return explainLineage(values.lineage, readGlobalFlags(values))
  }
  if (positionals.length !== 1) throw new UsageError('expected exactly one receipt ID')
  const id = positionals[0]!
  if (!/^[0-9a-f]{64}$/.test(id)) throw new UsageError(`a receipt ID is 64 lowercase hex characters, got "${id}"`)
  const global = readGlobalFlags(values)
  let view: ExplainView
  if (chooseLogSource(global) === 'remote') {
    const { status, text } = await createControlClient(global).getText(`/v1/receipts/${id}`)
    if (status === 404) throw new Error(`receipt ${id} not found`)
    if (status !== 200) throw new Error(describeRefusal(`GET /v1/receipts/${id}`, status, errorOf(text)))
    view = fromPointLoad(id, readJson(text, EXACT_JSON_LIMITS).value as PointLoad)
  } else {
    const store = await openExistingStore(global.receiptDb!)
    try {
      const row = await store.query.getById(id)
      if (row === undefined) throw new Error(`receipt ${id} not found in ${global.receiptDb}`)
      const finals = row.kind === 'decision' ? await store.query.findFinals(row.seq, row.receiptId) : []
      view = fromStored(row, finals.map(f => f.receiptId))
    } finally {
      await store.close()
    }
  }
  process.stdout.write(describeReceipt(view))
  return view.verification.verified ? 0 : 1
}

/** The body of GET /v1/receipts/{id} (docs/trust-control.md). */
interface PointLoad {
  seq: number
  kind: string
  decisionReceiptId: string | null
  finalReceiptIds: string[]
  receipt: Record<string, unknown> | null
  httpReceipt: HttpReceipt | null
  unverifiedReceipts?: UnverifiedReceipt[]
}

/** Whether the receipt verifies, and the line that says so. */
export interface Verification {
  verified: boolean
  text: string
}

export interface ExplainView {
  seq: number
  kind: string
  decisionReceiptId: string | null
  finalReceiptIds: string[]
  /**
   * An HttpReceipt (and whether its core form is stored yet), a receipt that only has a core form, or
   * a stored text that is not a receipt at all.
   */
  form: { http: HttpReceipt; coreStored: boolean } | { core: CoreReceipt } | { unreadable: string }
  verification: Verification
  tenant?: string | null
  subjectKey?: string | null
}

function fromPointLoad(id: string, body: PointLoad): ExplainView {
  const refused = body.unverifiedReceipts?.find(u => u.receiptId === id)
  // this command's own check runs over the canonical text of what it describes (the exact reader kept big integers)
  const text: StoredReceiptText =
    body.httpReceipt !== null
      ? { receiptId: id, httpJson: canonicalJson(body.httpReceipt), coreJson: null }
      : { receiptId: id, httpJson: null, coreJson: body.receipt === null ? null : canonicalJson(body.receipt) }
  const form: ExplainView['form'] =
    body.httpReceipt !== null
      ? { http: body.httpReceipt, coreStored: body.receipt !== null && 'decision' in body.receipt }
      : body.receipt !== null
        ? { core: body.receipt as unknown as CoreReceipt }
        : { unreadable: 'trust-control served no receipt text (the stored one is not JSON)' }
  const base = { seq: body.seq, kind: body.kind, decisionReceiptId: body.decisionReceiptId, finalReceiptIds: body.finalReceiptIds, form }
  if (refused !== undefined) {
    return { ...base, verification: { verified: false, text: `not verified: ${refused.failedStep}: ${refused.detail} (trust-control refused to sign its core form)` } }
  }
  return { ...base, verification: verify(text) }
}

function fromStored(row: StoredReceipt, finals: string[]): ExplainView {
  const stored = readStoredReceipt(row)
  const form: ExplainView['form'] = !stored.ok
    ? { unreadable: stored.detail }
    : stored.form === 'core'
      ? { core: stored.receipt as unknown as CoreReceipt }
      : { http: stored.receipt as unknown as HttpReceipt, coreStored: row.coreJson !== null }
  return {
    seq: row.seq,
    kind: row.kind,
    decisionReceiptId: row.decisionReceiptId,
    finalReceiptIds: finals,
    form,
    verification: verify(row),
    tenant: row.tenant,
    subjectKey: row.subjectKey,
  }
}

// The checks trust-control runs before it signs (stored-receipt-check.ts), with no trusted key: a failure
// at `signer` alone means everything else verified.
function verify(row: StoredReceiptText): Verification {
  const stored = readStoredReceipt(row)
  const check = stored.ok ? checkStoredReceipt(row, stored, []) : stored
  if (check.ok || check.step === 'signer') return { verified: true, text: 'id and signature verify; signer not checked here (gate receipt verify --trusted-key KEY)' }
  return { verified: false, text: `not verified: ${check.step}: ${check.detail}` }
}

/** One receipt in words. */
export function describeReceipt(view: ExplainView): string {
  let lines: string[]
  try {
    lines = 'unreadable' in view.form ? unreadableLines(view, view.form.unreadable) : 'core' in view.form ? coreLines(view, view.form.core) : httpLines(view, view.form.http, view.form.coreStored)
  } catch (err) {
    // a stored text altered into another shape: say so, and still say whether it verifies
    lines = unreadableLines(view, `it cannot be described (${(err as Error).message})`)
  }
  // every field came from a receipt: one line each, whatever it holds
  return lines.map(escapeControls).join('\n') + '\n'
}

function unreadableLines(view: ExplainView, why: string): string[] {
  return [`receipt at seq ${view.seq}: ${why}`, `  verified:    ${view.verification.text}`, `  linkage:     ${linkage(view)}`]
}

function httpLines(view: ExplainView, r: HttpReceipt, coreStored: boolean): string[] {
  const v = r.verdict
  const verdict =
    v.verdict === 'allow'
      ? 'allow: the request may proceed'
      : v.verdict === 'deny'
        ? `deny by ${v.guard}: ${v.reason} (HTTP ${v.http_status ?? 403})${v.details?.reason_code ? `, reason code ${v.details.reason_code}` : ''}`
        : v.verdict === 'cancel'
          ? `cancel: ${v.reason} (evaluation cancelled; treated as denied)`
          : `incomplete: ${v.reason} (evaluation did not finish; treated as denied)`
  return [
    `receipt ${r.id}`,
    `  kind:        ${view.kind === 'final' ? 'final receipt (records the status the client was answered with)' : 'decision receipt'}, seq ${view.seq}, ${r.receipt_kind}/${r.boundary_class}/${r.trust_level}`,
    `  verdict:     ${verdict}`,
    `  route:       ${r.method} ${r.route_pattern} (request ${r.request_id})`,
    `  caller:      identity hash ${r.caller_identity_hash}${view.tenant ? `, tenant ${view.tenant}` : ''}`,
    `  session:     ${r.session_id ?? 'none'}`,
    `  capability:  ${r.capability_id ?? 'none presented'}${view.subjectKey ? ` (agent ${view.subjectKey})` : ''}`,
    `  guards:      ${r.evidence === undefined || r.evidence.length === 0 ? 'no guard evidence recorded' : ''}`,
    ...(r.evidence ?? []).map((e: GuardEvidence) => `    - ${e.guard_name}: ${e.verdict ? 'passed' : 'failed'}${e.details ? `: ${e.details}` : ''}`),
    `  status:      ${r.response_status} (${statusScope(r)})`,
    `  time:        ${describeUnixTime(r.timestamp)}`,
    `  hashes:      content ${r.content_hash}, policy ${r.policy_hash}`,
    `  signer:      ${r.kernel_key}`,
    `  verified:    ${view.verification.text}`,
    `  core form:   ${coreStored ? 'stored' : view.verification.verified ? 'not stored yet (made and stored when trust-control first serves it)' : 'none: nothing is signed over a receipt that does not verify'}`,
    `  linkage:     ${linkage(view)}`,
  ]
}

// A tool call's receipt (docs/mcp.md): it only has the core form.
function coreLines(view: ExplainView, r: CoreReceipt): string[] {
  const d = r.decision
  const verdict =
    d === undefined
      ? `no decision: ${r.receipt_kind}, evidence only`
      : d.verdict === 'allow'
        ? 'allow: the call may proceed'
        : d.verdict === 'deny'
          ? `deny by ${d.guard}: ${d.reason}`
          : `${d.verdict}: ${d.reason}`
  const details = r.metadata?.['gate_deny_details'] as { reason_code?: unknown } | undefined
  const reasonCode = typeof details?.reason_code === 'string' ? `, reason code ${details.reason_code}` : ''
  return [
    `receipt ${r.id}`,
    `  kind:        ${view.kind === 'final' ? 'final receipt (records how the call ended)' : 'decision receipt'}, seq ${view.seq}, ${r.receipt_kind}/${r.boundary_class}/${r.trust_level} (core receipt gate.receipt.v1)`,
    `  verdict:     ${verdict}${reasonCode}`,
    `  tool:        ${r.tool_name} on tool server ${r.tool_server}`,
    `  parameters:  hash ${r.action.parameter_hash} (${Object.keys(r.action.parameters).length} argument(s))`,
    `  capability:  ${r.capability_id === '' ? 'none presented' : r.capability_id}${view.subjectKey ? ` (agent ${view.subjectKey})` : ''}${view.tenant ? `, tenant ${view.tenant}` : ''}`,
    `  guards:      ${r.evidence === undefined || r.evidence.length === 0 ? 'no guard evidence recorded' : ''}`,
    ...(r.evidence ?? []).map((e: GuardEvidence) => `    - ${e.guard_name}: ${e.verdict ? 'passed' : 'failed'}${e.details ? `: ${e.details}` : ''}`),
    `  time:        ${describeUnixTime(r.timestamp)}`,
    `  hashes:      content ${r.content_hash}, policy ${r.policy_hash}`,
    `  signer:      ${r.kernel_key}`,
    `  verified:    ${view.verification.text}`,
    `  linkage:     ${linkage(view)}`,
  ]
}

function statusScope(r: HttpReceipt): string {
  const scope = r.metadata?.['gate_http_status_scope']
  if (scope === 'final') return 'the status answered to the client'
  if (scope === 'decision') return 'the status the decision maps to'
  return 'status at signing'
}

function linkage(view: ExplainView): string {
  if (view.kind === 'final') return `finalizes decision receipt ${view.decisionReceiptId ?? '(unknown)'}`
  if (view.finalReceiptIds.length === 0) return 'no final receipt names this decision'
  return `final receipt${view.finalReceiptIds.length > 1 ? 's' : ''} ${view.finalReceiptIds.join(', ')}`
}
