// A ProxyEvaluator for the proxy's own tests: it signs real receipts (so they verify) but decides by a
// function the test supplies, and can be told to fail. Only faults the real kernel cannot be driven to
// (a cancel verdict, a throwing evaluator, a failing receipt write) need it; the sidecar's end-to-end
// tests run the real kernel.
import { callerIdentityHash, contentHash, createSigner, signHttpReceiptJson, type GateHttpRequest, type HttpReceipt, type Verdict } from '@gate/sdk'
import type { FinalizedReceipt, ProxyEvaluateInput, ProxyEvaluation, ProxyEvaluator } from '../ports.js'

export interface FakeEvaluator extends ProxyEvaluator {
  readonly publicKey: string
  readonly inputs: ProxyEvaluateInput[]
  readonly finalized: HttpReceipt[]
  failEvaluate: Error | undefined
  failFinalize: Error | undefined
}

export function createFakeEvaluator(decide: (input: ProxyEvaluateInput) => Verdict | { verdict: Verdict; approval?: ProxyEvaluation['approval'] }): FakeEvaluator {
  const signer = createSigner({ secret: new Uint8Array(32).fill(3) })
  const inputs: ProxyEvaluateInput[] = []
  const finalized: HttpReceipt[] = []
  const fake: FakeEvaluator = {
    publicKey: signer.publicKey,
    inputs,
    finalized,
    failEvaluate: undefined,
    failFinalize: undefined,
    matchRoute: (_method, path) => (path.startsWith('/pets/') ? { pattern: '/pets/{id}', matched: true } : { pattern: path, matched: false }),
    async evaluate(input) {
      inputs.push(input)
      if (fake.failEvaluate !== undefined) throw fake.failEvaluate
      const decided = decide(input)
      const { verdict, approval } = 'verdict' in decided && typeof decided.verdict === 'object' ? decided : { verdict: decided as Verdict, approval: undefined }
      const status = verdict.verdict === 'deny' ? (verdict.http_status ?? 403) : { allow: 200, cancel: 500, incomplete: 428 }[verdict.verdict]
      const signed = sign(input.request, verdict, status)
      const responseJson = `{"verdict":${JSON.stringify(verdict)},"receipt":${signed.json},"evidence":[]}`
      return { verdict, receipt: signed.receipt, status, responseJson, approval }
    },
    async finalize(decision, answeredStatus): Promise<FinalizedReceipt> {
      if (fake.failFinalize !== undefined) throw fake.failFinalize
      const { id: _id, signature: _sig, ...body } = decision.receipt
      const signed = signHttpReceiptJson(
        { ...body, response_status: answeredStatus, metadata: { gate_http_status_scope: 'final', gate_decision_receipt_id: decision.receipt.id } },
        signer,
      )
      finalized.push(signed.receipt)
      return signed
    },
  }

  function sign(request: GateHttpRequest, verdict: Verdict, status: number) {
    return signHttpReceiptJson(
      {
        request_id: request.request_id,
        route_pattern: request.route_pattern,
        method: request.method,
        caller_identity_hash: callerIdentityHash(request.caller),
        verdict,
        receipt_kind: 'mediated_decision',
        boundary_class: 'prevent',
        tool_origin: 'caller_executed',
        redaction_mode: 'none',
        response_status: status,
        timestamp: request.timestamp,
        content_hash: contentHash({ ...request }),
        policy_hash: '0'.repeat(64),
        trust_level: 'mediated',
        metadata: { gate_http_status_scope: 'decision' },
      },
      signer,
    )
  }
  return fake
}
