// Writing frames (spec 03, Native messages): a 4-byte unsigned big-endian length of the payload, then
// the payload, one RFC 8785 canonical JSON object. The signed objects a message nests (a capability
// token, a receipt, the tokens of a capability list) may be RawJson: their bytes are spliced in as
// they are (raw-json.ts), everything else is canonicalized here. A message whose payload would exceed
// the 16 MiB limit is refused before anything is written, since the peer would close on it.
import { canonicalJson } from '../protocol/canonical-json.js'
import { WireProtocolError } from '../errors.js'
import { FRAME_PREFIX_BYTES, MAX_FRAME_PAYLOAD_BYTES } from './limits.js'
import type { AgentMessage, KernelMessage } from './messages.js'
import { RawJson } from './raw-json.js'

const encoder = new TextEncoder()

/** The canonical JSON text of a message, its RawJson members written as received. */
export function messageText(message: AgentMessage | KernelMessage): string {
  const obj = message as unknown as Record<string, unknown>
  // RFC 8785 member order: UTF-16 code units, which the default sort compares
  const keys = Object.keys(obj).filter(k => obj[k] !== undefined).sort()
  let text = '{'
  for (const key of keys) {
    if (text.length > 1) text += ','
    text += canonicalJson(key) + ':' + memberText(obj[key])
  }
  return text + '}'
}

// Only top-level members and the items of a top-level array hold signed objects in either family.
function memberText(value: unknown): string {
  if (value instanceof RawJson) return value.canonicalText()
  if (Array.isArray(value) && value.some(v => v instanceof RawJson)) return '[' + value.map(memberText).join(',') + ']'
  return canonicalJson(value)
}

/** One whole frame (prefix and payload); throws message_too_large for a payload over the limit. */
export function encodeFrame(message: AgentMessage | KernelMessage): Uint8Array {
  const payload = encoder.encode(messageText(message))
  if (payload.length > MAX_FRAME_PAYLOAD_BYTES) {
    throw new WireProtocolError('message_too_large', `a ${message.type} payload of ${payload.length} bytes exceeds the ${MAX_FRAME_PAYLOAD_BYTES}-byte frame limit`)
  }
  const frame = new Uint8Array(FRAME_PREFIX_BYTES + payload.length)
  new DataView(frame.buffer).setUint32(0, payload.length, false)
  frame.set(payload, FRAME_PREFIX_BYTES)
  return frame
}
