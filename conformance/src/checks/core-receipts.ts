// spec 02 (VerifyReceiptResponse, receipt signing order) and spec 03 (core receipt id): the core
// receipts the sidecar serves (GET /v1/receipts/query, Gate's /v1 helper routes) verify in spec order,
// authority semantics, then the recomputed content-addressed id, then the signature over {id, body},
// and a receipt whose id was swapped fails at the id step with receipt_id_valid false. And a core
// receipt is only ever signed over a stored receipt that verifies: one altered in the store after it
// was written is served as stored and reported, never as a freshly signed core receipt.
import { verifyCoreReceipt, type HttpReceipt } from '@gate/sdk'
import { defineCheck, fail, skip } from '../check.js'
import { buildRequest } from '../gate-request.js'
import { snippet } from '../context.js'

/** The served entries of `receipt`'s request: its HTTP form (`request_id`) or its core form (`action.parameters.request_id`). */
function entriesOf(receipts: unknown[], receipt: HttpReceipt): Record<string, unknown>[] {
  return receipts.filter((r): r is Record<string, unknown> => {
    if (typeof r !== 'object' || r === null) return false
    const o = r as Record<string, unknown>
    return o.request_id === receipt.request_id || (o.action as { parameters?: { request_id?: unknown } } | undefined)?.parameters?.request_id === receipt.request_id
  })
}

/**
 * Fails unless the answer `where` serves the altered stored receipt as stored (its altered timestamp),
 * never as a core receipt, and lists it in `unverifiedReceipts` with a failing step.
 */
function expectServedUnsigned(where: string, body: unknown, receipt: HttpReceipt, alteredTimestamp: number, kernelKey: string): void {
  const b = (typeof body === 'object' && body !== null ? body : {}) as { receipts?: unknown; unverifiedReceipts?: unknown }
  if (!Array.isArray(b.receipts)) fail(`${where}: the answer has no receipts array`)
  const entries = entriesOf(b.receipts, receipt)
  if (entries.length === 0) fail(`${where} does not hold the receipt of request ${receipt.request_id}: a receipt that does not verify is still served (as stored), never dropped`)
  for (const entry of entries) {
    if ('decision' in entry || 'tool_server' in entry) {
      const check = verifyCoreReceipt(entry, { trustedKeys: [kernelKey] })
      fail(`${where} serves a core receipt${check.signature_valid ? ', freshly signed by the sidecar key,' : ''} of a stored receipt altered after it was written: nothing may be signed over a stored receipt that does not verify`)
    }
    if (entry.timestamp !== alteredTimestamp) fail(`${where} serves the receipt with timestamp ${String(entry.timestamp)}, not as stored (${alteredTimestamp})`)
  }
  const listed = Array.isArray(b.unverifiedReceipts)
    ? b.unverifiedReceipts.find(u => typeof u === 'object' && u !== null && (u as { receiptId?: unknown }).receiptId === receipt.id)
    : undefined
  if (listed === undefined) fail(`${where} does not list receipt ${receipt.id} in unverifiedReceipts (it serves it as stored, but says nothing of it not verifying)`)
  if (typeof (listed as { failedStep?: unknown }).failedStep !== 'string') fail(`${where}: its unverifiedReceipts entry names no failedStep: ${JSON.stringify(listed)}`)
}

export const CORE_RECEIPT_CHECKS = [
  defineCheck({
    id: 'receipt.core-verification-order',
    description: 'the core receipt of an evaluation (GET /v1/receipts/query) verifies: kind coherent, its id the SHA-256 of its canonical body, its signature over {id, body}; with its id swapped it reports receipt_id_valid false and signature_valid false',
    specRef: '02 VerifyReceiptResponse; Receipt signing order; 03 Core receipt (id, signature)',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const kernelKey = await ctx.kernelKey()
      if (kernelKey === null) skip('the sidecar publishes no kernel_key on /gate/live')
      const path = ctx.unmatched()
      const evaluated = await ctx.evaluate(buildRequest({ method: 'GET', path }))
      const res = await ctx.getWithControlToken(`/v1/receipts/query?${new URLSearchParams({ toolName: `GET ${path}` })}`)
      if (res.status === 404 || res.status === 405) skip(`the sidecar serves no receipt query (GET /v1/receipts/query answered ${res.status})`)
      if (res.status !== 200) fail(`GET /v1/receipts/query answered ${res.status} ${snippet(res.text)}`)
      const receipts = (res.json as { receipts?: Record<string, unknown>[] } | undefined)?.receipts ?? []
      const core = receipts.find(r => 'decision' in r && (r.action as { parameters?: { request_id?: unknown } } | undefined)?.parameters?.request_id === evaluated.answer.receipt.request_id)
      if (core === undefined) fail(`GET /v1/receipts/query?toolName=GET ${path} holds no core receipt of request ${evaluated.answer.receipt.request_id}: ${snippet(res.text)}`)
      const check = verifyCoreReceipt(core, { trustedKeys: [kernelKey] })
      if (!check.ok || !check.receipt_id_valid || !check.signature_valid) {
        fail(`the served core receipt does not verify (${check.failedStep}: ${check.detail}); receipt_id_valid ${check.receipt_id_valid}, signature_valid ${check.signature_valid}`)
      }
      for (const id of [evaluated.answer.receipt.id, 'f'.repeat(64)]) {
        const swapped = verifyCoreReceipt({ ...core, id }, { trustedKeys: [kernelKey] })
        if (swapped.receipt_id_valid || swapped.signature_valid || swapped.failedStep !== 'receipt_id') {
          fail(`with its id swapped for ${id}: receipt_id_valid ${swapped.receipt_id_valid}, signature_valid ${swapped.signature_valid}, failed at ${swapped.failedStep}`)
        }
      }
    },
  }),
  defineCheck({
    id: 'receipt.tampered-store-unsigned',
    description:
      'a receipt altered in the store after it was written (one byte of its stored JSON) is never served as a freshly signed core receipt: GET /v1/receipts/query (read twice) and the point load GET /v1/receipts/{id} serve it as stored and list it in unverifiedReceipts with its failing step',
    specRef: '02 Core receipt mapping (re-signed with the kernel keypair), Receipt signing order (verification); 03 Receipt query response (stored receipts served unchanged); Gate: docs/receipts.md (nothing is signed unverified), docs/trust-control.md (unverifiedReceipts)',
    required: true,
    needs: ['control-token', 'receipt-store'],
    async run(ctx) {
      const kernelKey = await ctx.kernelKey()
      if (kernelKey === null) skip('the sidecar publishes no kernel_key on /gate/live')
      const path = ctx.unmatched()
      const { receipt } = (await ctx.evaluate(buildRequest({ method: 'GET', path }))).answer
      // one byte, before anything read the receipt: the last digit of its timestamp (its lowest bit: no carry)
      const altered = receipt.timestamp ^ 1
      const changed = await ctx.receiptStore!.alterReceipt(receipt.id, `"timestamp":${receipt.timestamp}`, `"timestamp":${altered}`)
      if (changed !== 1) fail(`the receipt store changed ${changed} rows for receipt ${receipt.id}, not 1: is it the sidecar's store?`)
      const query = `/v1/receipts/query?${new URLSearchParams({ toolName: `GET ${path}` })}`
      // the second read: a failing receipt must not have had a core form stored by the first
      for (const read of ['first', 'second']) {
        const res = await ctx.getWithControlToken(query)
        if (res.status !== 200) fail(`GET /v1/receipts/query answered ${res.status} ${snippet(res.text)}`)
        expectServedUnsigned(`the ${read} read of GET /v1/receipts/query`, res.json, receipt, altered, kernelKey)
      }
      const point = await ctx.getWithControlToken(`/v1/receipts/${receipt.id}`)
      if (point.status !== 200) fail(`GET /v1/receipts/${receipt.id} answered ${point.status} ${snippet(point.text)}`)
      const loaded = (point.json ?? {}) as { receipt?: unknown; unverifiedReceipts?: unknown }
      expectServedUnsigned(`GET /v1/receipts/${receipt.id}`, { receipts: [loaded.receipt], unverifiedReceipts: loaded.unverifiedReceipts }, receipt, altered, kernelKey)
    },
  }),
]
