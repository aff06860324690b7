import { checkSchema } from '../examples/check-schema.js'
import { executionNonce, toolCallResponse, traceReceipt, variant, type Example } from '../examples/values.js'

const response = toolCallResponse()
const RESULTS: Example[] = [
  { status: 'ok', value: null },
  { status: 'stream_complete', total_chunks: 3 },
  { status: 'cancelled', reason: 'client cancelled', chunks_received: 1 },
  { status: 'incomplete', reason: 'tool server closed', chunks_received: 0 },
]
const ERRORS: Example[] = [
  { code: 'capability_denied', detail: 'scope does not grant deletePet' },
  { code: 'capability_expired' },
  { code: 'capability_revoked' },
  { code: 'policy_denied', detail: { guard: 'BudgetGuard', reason: 'over budget' } },
  { code: 'tool_server_error', detail: 'upstream 502' },
  { code: 'internal_error', detail: 'store unavailable' },
]

checkSchema(
  'gate.http.stream_frame.v1',
  [
    { name: 'a chunk', value: { type: 'tool_call_chunk', id: 'call-1', chunk_index: 0, data: 'partial' } },
    { name: 'a chunk of null data', value: { type: 'tool_call_chunk', id: 'call-1', chunk_index: 7, data: null } },
    { name: 'a response with an ok result', value: response },
    ...RESULTS.map((result) => ({ name: `a ${String(result.status)} result`, value: variant(response, (v) => (v.result = result)) })),
    ...ERRORS.map((error) => ({
      name: `an err result ${String(error.code)}`,
      value: variant(response, (v) => (v.result = { status: 'err', error })),
    })),
    { name: 'a response with an execution nonce', value: variant(response, (v) => (v.execution_nonce = executionNonce())) },
    { name: 'a response with a trace receipt', value: variant(response, (v) => (v.receipt = traceReceipt())) },
    { name: 'a heartbeat', value: { type: 'heartbeat' } },
    { name: 'a capability revocation', value: { type: 'capability_revoked', id: 'cap-7' } },
  ],
  [
    { name: 'a negative chunk_index', value: { type: 'tool_call_chunk', id: 'c', chunk_index: -1, data: 1 }, at: '/chunk_index' },
    { name: 'a fractional chunk_index', value: { type: 'tool_call_chunk', id: 'c', chunk_index: 1.5, data: 1 }, at: '/chunk_index' },
    { name: 'a chunk without data', value: { type: 'tool_call_chunk', id: 'c', chunk_index: 0 }, at: '(root)' },
    { name: 'a chunk with an empty id', value: { type: 'tool_call_chunk', id: '', chunk_index: 0, data: 1 }, at: '/id' },
    { name: 'a response without receipt', value: variant(response, (v) => delete v.receipt), at: '(root)' },
    {
      name: 'a response whose receipt is kind-incoherent',
      value: variant(response, (v) => (v.receipt.boundary_class = 'detect_only')),
      at: '/receipt/boundary_class',
    },
    { name: 'an unknown result status', value: variant(response, (v) => (v.result = { status: 'error' })), at: '/result' },
    { name: 'an unknown error code', value: variant(response, (v) => (v.result = { status: 'err', error: { code: 'teapot' } })), at: '/result/error' },
    {
      name: 'policy_denied with a string detail',
      value: variant(response, (v) => (v.result = { status: 'err', error: { code: 'policy_denied', detail: 'no' } })),
      at: '/result/error/detail',
    },
    {
      name: 'capability_denied without detail',
      value: variant(response, (v) => (v.result = { status: 'err', error: { code: 'capability_denied' } })),
      at: '/result/error',
    },
    { name: 'a negative total_chunks', value: variant(response, (v) => (v.result = { status: 'stream_complete', total_chunks: -1 })), at: '/result/total_chunks' },
    { name: 'cancelled without chunks_received', value: variant(response, (v) => (v.result = { status: 'cancelled', reason: 'r' })), at: '/result' },
    { name: 'ok without value', value: variant(response, (v) => (v.result = { status: 'ok' })), at: '/result' },
    { name: 'a heartbeat with a member', value: { type: 'heartbeat', at: 1 }, at: '(root)' },
    { name: 'a revocation without id', value: { type: 'capability_revoked' }, at: '(root)' },
    { name: 'a capability_list message', value: { type: 'capability_list', capabilities: [] }, at: '(root)' },
    { name: 'an agent message', value: { type: 'tool_call_request', id: 'c' }, at: '(root)' },
    { name: 'an unknown response member', value: variant(response, (v) => (v.seq = 1)), at: '(root)' },
  ],
)
