// spec 02 (VerifyReceiptResponse, receipt signing order) and spec 03 (core receipt id): the core
// receipts the sidecar serves (GET /v1/receipts/query, Gate's /v1 helper routes) verify in spec order,
// authority semantics, then the recomputed content-addressed id, then the signature over {id, body},
// and a receipt whose id was swapped fails at the id step with receipt_id_valid false.
import { verifyCoreReceipt } from '@gate/sdk'
import { defineCheck, fail, skip } from '../check.js'
import { buildRequest } from '../gate-request.js'
import { snippet } from '../context.js'

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
]
