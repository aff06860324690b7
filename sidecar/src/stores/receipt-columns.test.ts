// Every filter column of a row is a function of its signed receipt: the writer signs the tenant and the
// agent subject it files a row under, and the columns the audit recomputes from a receipt equal the
// ones the writer stored, for every kind of row the kernel writes.
import t from 'tap'
import { join } from 'node:path'
import { createSigner, generateSecret, type CoreReceipt, type HttpReceipt } from '@gate/sdk'
import { coreReceiptDraft, openTestReceiptStore, receiptBody } from '../testing/receipt-rows.js'
import { columnMismatches, signedCoreColumns, signedHttpColumns } from '@gate/trust'
import { bindCoreReceiptContext, bindReceiptContext } from './receipt-columns.js'
import { createInlineReceiptWriter } from './receipt-writer.js'
import { openTransparencyLogStore } from './transparency-log-store.js'

const subject = 'e'.repeat(64)

t.test('the tenant and subject are bound into the signed metadata, and nothing when there are none', async t => {
  const body = receiptBody(1)
  t.equal(bindReceiptContext(body, {}), body, 'no context: the same body')
  t.equal(bindReceiptContext(body, { tenant: null, subjectKey: null }), body)
  const bound = bindReceiptContext(body, { tenant: 'acme', subjectKey: subject })
  t.same(bound.metadata, { gate_http_status_scope: 'decision', gate_tenant: 'acme', gate_subject_key: subject })
  t.same(body.metadata, { gate_http_status_scope: 'decision' }, 'the caller\'s body is not changed')
  t.same(bindReceiptContext(receiptBody(2, { metadata: null }), { tenant: 'acme' }).metadata, { gate_tenant: 'acme' })
  const core = bindCoreReceiptContext(coreReceiptDraft(1, { tenant_id: null }), { tenant: 'acme', subjectKey: subject })
  t.equal(core.tenant_id, 'acme', 'a core receipt carries its tenant in tenant_id')
  t.equal(core.metadata?.['gate_subject_key'], subject)
  t.equal(core.metadata?.['gate_tenant'], undefined)
})

t.test('the columns the writer stores are the columns its signed receipts give, for every kind of row', async t => {
  const signer = createSigner({ secret: generateSecret() })
  const path = join(t.testdir(), 'receipts.db')
  const store = await openTestReceiptStore(t, path)
  const writer = createInlineReceiptWriter({ signer: () => signer, log: store.log })
  const financial = { cost_charged: 450, currency: 'USD', grant_index: 0 }
  const decision = await writer.write(receiptBody(1, { capability_id: 'cap-1', metadata: { gate_http_status_scope: 'decision', financial } }), {
    tenant: 'acme',
    subjectKey: subject,
    kind: 'decision',
    decisionReceiptId: null,
    costUnits: 450,
    costCurrency: 'USD',
    attemptedCostUnits: null,
  })
  // as the kernel writes them: a refused cost, the proxy's finalized receipt (its decision's metadata,
  // no cost columns), an approval transition (a decision naming the receipt it answers)
  await writer.write(receiptBody(2, { verdict: { verdict: 'deny', reason: 'over', guard: 'BudgetGuard' }, metadata: { gate_http_status_scope: 'decision', financial: { cost_charged: 0, attempted_cost: 501, currency: 'USD' } } }), {
    kind: 'decision',
    decisionReceiptId: null,
    costUnits: 0,
    costCurrency: 'USD',
    attemptedCostUnits: 501,
  })
  await writer.write(
    { ...receiptBody(1, { capability_id: 'cap-1', response_status: 201 }), metadata: { gate_http_status_scope: 'final', gate_decision_receipt_id: decision.receipt.id, financial } },
    { tenant: 'acme', subjectKey: subject, kind: 'final', decisionReceiptId: decision.receipt.id },
  )
  await writer.write(receiptBody(3, { metadata: { gate_approval_id: 'a1', gate_decision_receipt_id: decision.receipt.id } }), { kind: 'decision', decisionReceiptId: null })
  // a tool call's receipt names its request in metadata (kernel/tool-call-kernel.ts)
  const call = await writer.writeCore(coreReceiptDraft(4, { capability_id: 'cap-2', tenant_id: 'acme', metadata: { gate_request_id: 'call-4' } }), { requestId: 'call-4', tenant: 'acme', subjectKey: subject, kind: 'decision', decisionReceiptId: null })
  await writer.writeCore(
    { ...coreReceiptDraft(5, { capability_id: 'cap-2', tenant_id: 'acme' }), decision: { verdict: 'incomplete', reason: 'the tool server exited' }, metadata: { gate_request_id: 'call-4', gate_decision_receipt_id: call.receipt.id } },
    { requestId: 'call-4', tenant: 'acme', subjectKey: subject, kind: 'final', decisionReceiptId: call.receipt.id },
  )

  const log = await openTransparencyLogStore(path)
  t.teardown(() => log.close())
  const rows = await log.auditedReceiptsAfter(0, 10)
  t.equal(rows.length, 6)
  for (const row of rows) {
    const signed = row.httpJson === null ? signedCoreColumns(JSON.parse(row.coreJson!) as CoreReceipt) : signedHttpColumns(JSON.parse(row.httpJson) as HttpReceipt)
    t.same(columnMismatches(row, signed), [], `seq ${row.seq} (${row.kind}, ${row.httpJson === null ? 'core' : 'http'})`)
  }
  t.match(rows[0], { tenant: 'acme', subjectKey: subject, costUnits: 450 })
  t.match(rows[2], { kind: 'final', costUnits: null, decisionReceiptId: decision.receipt.id })
  t.match(rows[5], { kind: 'final', outcome: 'incomplete', tenant: 'acme', subjectKey: subject })

  const forged = { ...rows[0]!, outcome: 'deny' as const, tenant: 'globex', costUnits: 1 }
  t.same(
    columnMismatches(forged, signedHttpColumns(JSON.parse(rows[0]!.httpJson!) as HttpReceipt)).map(m => m.column),
    ['outcome', 'tenant', 'cost_units'],
    'each rewritten column is named',
  )
})
