import { checkSchema } from '../examples/check-schema.js'
import { denyVerdict, evaluateResponse, executionNonce, variant } from '../examples/values.js'

const base = evaluateResponse()

checkSchema(
  'gate.http.evaluate_response.v1',
  [
    { name: 'an allow', value: base },
    { name: 'an allow with an execution nonce', value: variant(base, (v) => (v.execution_nonce = executionNonce())) },
    {
      name: 'a strict-preflight incomplete with an execution nonce',
      value: variant(base, (v) => {
        v.verdict = { verdict: 'incomplete', reason: 'execution nonce required' }
        v.receipt.verdict = v.verdict
        v.receipt.response_status = 428
        v.execution_nonce = executionNonce()
      }),
    },
    { name: 'a deny', value: variant(base, (v) => ((v.verdict = denyVerdict()), (v.receipt.verdict = denyVerdict()))) },
    { name: 'a cancel', value: variant(base, (v) => ((v.verdict = { verdict: 'cancel', reason: 'timeout' }), (v.receipt.verdict = v.verdict))) },
    { name: 'empty evidence', value: variant(base, (v) => (v.evidence = [])) },
    { name: 'evidence without details', value: variant(base, (v) => (v.evidence = [{ guard_name: 'DefaultPolicyGuard', verdict: true }])) },
    { name: 'an additive member', value: variant(base, (v) => (v.evaluated_in_ms = 2)) },
  ],
  [
    { name: 'a missing evidence', value: variant(base, (v) => delete v.evidence), at: '(root)' },
    { name: 'a missing receipt', value: variant(base, (v) => delete v.receipt), at: '(root)' },
    { name: 'a missing verdict', value: variant(base, (v) => delete v.verdict), at: '(root)' },
    {
      name: 'a deny with an execution nonce',
      value: variant(base, (v) => ((v.verdict = denyVerdict()), (v.execution_nonce = executionNonce()))),
      at: '/verdict/verdict',
    },
    {
      name: 'a cancel with an execution nonce',
      value: variant(base, (v) => ((v.verdict = { verdict: 'cancel', reason: 't' }), (v.execution_nonce = executionNonce()))),
      at: '/verdict/verdict',
    },
    { name: 'a receipt with observation_outcome', value: variant(base, (v) => (v.receipt.observation_outcome = 'x')), at: '/receipt/observation_outcome' },
    { name: 'an unknown verdict', value: variant(base, (v) => (v.verdict = { verdict: 'maybe' })), at: '/verdict' },
    { name: 'evidence that is not a list', value: variant(base, (v) => (v.evidence = {})), at: '/evidence' },
    { name: 'an invalid execution nonce', value: variant(base, (v) => (v.execution_nonce = { schema: 'gate.execution_nonce.v1' })), at: '/execution_nonce' },
  ],
)
