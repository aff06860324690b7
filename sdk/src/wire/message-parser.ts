// Reading one payload as a message of the family a side expects (spec 03, Errors): the kernel reads
// AgentMessages, an agent KernelMessages. The payload must be UTF-8 JSON (a byte-order mark is not
// JSON), read exactly (integers beyond double precision stay exact, for the parameter hash), within
// depth and size limits, and valid against the family's schema (gate.wire.*_message.v1, ajv): exact
// field sets, nothing else. Anything else is a deserialization failure, which closes the transport.
// The payload may be any JSON text of such an object; Gate writes canonical JSON but does not require
// it of a peer. The signed objects a message nests come out as RawJson holding their received bytes.
import { validate } from '@gate/schemas'
import { WireProtocolError } from '../errors.js'
import { readJson, type JsonReadResult } from '../protocol/json-reader.js'
import { EXACT_JSON_LIMITS } from '../protocol/parse-json-exact.js'
import type { AgentMessage, KernelMessage } from './messages.js'
import { RawJson } from './raw-json.js'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Parses an agent-to-kernel payload; `capability_token` of a tool call comes out as RawJson. */
export function parseAgentMessage(payload: Uint8Array): AgentMessage {
  const read = readPayload(payload, 'agent message', { rawMemberOf: 'capability_token' })
  const message = checked(read.value, 'gate.wire.agent_message.v1', 'agent message') as AgentMessage & Record<string, unknown>
  if (message.type === 'tool_call_request') message.capability_token = raw(read.rawMember, message.capability_token, 'capability_token')
  return message
}

/** Parses a kernel-to-agent payload; a response's `receipt` and a list's `capabilities` come out as RawJson. */
export function parseKernelMessage(payload: Uint8Array): KernelMessage {
  const read = readPayload(payload, 'kernel message', { rawMemberOf: 'receipt', rawElementsOf: 'capabilities' })
  const message = checked(read.value, 'gate.wire.kernel_message.v1', 'kernel message') as KernelMessage & Record<string, unknown>
  if (message.type === 'tool_call_response') message.receipt = raw(read.rawMember, message.receipt, 'receipt')
  if (message.type === 'capability_list') {
    const texts = read.rawElements ?? []
    if (texts.length !== message.capabilities.length) throw failure('capability_list names its capabilities member more than once')
    message.capabilities = message.capabilities.map((value, i) => new RawJson(texts[i]!, value))
  }
  return message
}

function readPayload(payload: Uint8Array, family: string, options: { rawMemberOf: string; rawElementsOf?: string }): JsonReadResult {
  let text: string
  try {
    text = utf8.decode(payload)
  } catch (err) {
    throw failure(`the ${family} payload is not UTF-8`, err)
  }
  try {
    return readJson(text, { ...EXACT_JSON_LIMITS, bigIntegers: 'bigint', ...options })
  } catch (err) {
    throw failure(`the ${family} payload is not JSON: ${(err as Error).message}`, err)
  }
}

function checked(value: unknown, schemaId: string, family: string): unknown {
  const result = validate(schemaId, value)
  if (!result.ok) throw failure(`not a valid ${family}: ${result.errors[0] ?? 'schema rejected it'}`)
  return value
}

// The member's text as received. None while the value is there means the name occurred twice (or was
// written with an escape), and which of two values counts must never be a guess.
function raw(text: string | undefined, value: unknown, member: string): RawJson {
  if (text === undefined) throw failure(`${member} appears more than once (or under an escaped name)`)
  return new RawJson(text, value)
}

function failure(detail: string, cause?: unknown): WireProtocolError {
  return new WireProtocolError('deserialization_failed', detail, cause)
}
