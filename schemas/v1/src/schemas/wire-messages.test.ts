// The native wire's two message families (spec 03, Native messages): every AgentMessage and
// KernelMessage variant accepted, and the field sets exact (no other fields, none missing).
import { checkSchema } from '../examples/check-schema.js'
import { capability, minimalCapability, toolCallResponse, variant, type Example } from '../examples/values.js'

const request = (): Example => ({ type: 'tool_call_request', id: 'call-1', capability_token: minimalCapability(), server_id: 'fs', tool: 'read_file', params: { path: '/tmp/a' } })

checkSchema(
  'gate.wire.agent_message.v1',
  [
    { name: 'a tool call', value: request() },
    {
      name: 'a tool call with every optional member',
      value: variant(request(), (v) => {
        v.governed_intent = { id: 'i-1', server_id: 'fs', tool_name: 'read_file', purpose: 'audit' }
        v.approval_token = { id: 'a-1' }
        v.approval_tokens = [{ id: 'a-2' }]
        v.threshold_approval_proposal = { id: 'p-1' }
        v.supplemental_authorization = { kind: 'x' }
        v.execution_nonce = { nonce_id: 'n' }
      }),
    },
    { name: 'list_capabilities', value: { type: 'list_capabilities' } },
    { name: 'a heartbeat', value: { type: 'heartbeat' } },
  ],
  [
    { name: 'a kernel message type', value: { type: 'tool_call_chunk', id: 'c', chunk_index: 0, data: 1 }, at: '(root)' },
    { name: 'a tool call with another field', value: variant(request(), (v) => (v.arguments = {})), at: '(root)' },
    { name: 'a tool call without params', value: variant(request(), (v) => delete v.params), at: '(root)' },
    { name: 'a tool call without a capability token', value: variant(request(), (v) => delete v.capability_token), at: '(root)' },
    { name: 'a capability token given as text', value: variant(request(), (v) => (v.capability_token = 'eyJ...')), at: '/capability_token' },
    { name: 'an empty id', value: variant(request(), (v) => (v.id = '')), at: '/id' },
    { name: 'params that are not an object', value: variant(request(), (v) => (v.params = [1])), at: '/params' },
    { name: 'a heartbeat with a member', value: { type: 'heartbeat', id: 'h' }, at: '(root)' },
    { name: 'list_capabilities with a member', value: { type: 'list_capabilities', all: true }, at: '(root)' },
  ],
)

checkSchema(
  'gate.wire.kernel_message.v1',
  [
    { name: 'a chunk', value: { type: 'tool_call_chunk', id: 'call-1', chunk_index: 0, data: { progress: 1 } } },
    { name: 'a response', value: toolCallResponse() },
    { name: 'a heartbeat', value: { type: 'heartbeat' } },
    { name: 'a revocation', value: { type: 'capability_revoked', id: 'cap-7' } },
    { name: 'a capability list', value: { type: 'capability_list', capabilities: [capability(), minimalCapability()] } },
    { name: 'an empty capability list', value: { type: 'capability_list', capabilities: [] } },
  ],
  [
    { name: 'an agent message', value: { type: 'list_capabilities' }, at: '(root)' },
    { name: 'a capability list with another field', value: { type: 'capability_list', capabilities: [], more: 1 }, at: '(root)' },
    { name: 'a capability list of non-tokens', value: { type: 'capability_list', capabilities: [{}] }, at: '(root)' },
    { name: 'a response without a receipt', value: variant(toolCallResponse(), (v) => delete v.receipt), at: '(root)' },
  ],
)
