// A small native wire kernel written for the wire section's tests: without faults it passes every
// check; each fault breaks the one behaviour a check targets (a wrong heartbeat, frames that are not
// canonical, a malformed capability list, a call allowed without a capability, a receipt whose
// signature does not verify, a refused combination evaluated, frames not reassembled, an oversize
// prefix or bad payload answered instead of closed, a partial frame acted on at EOF).
import { createServer, type Server, type Socket } from 'node:net'
import { canonicalJson, createSigner, generateSecret, sha256Hex, signCoreReceipt } from '@gate/sdk'

export type WireFault =
  | 'wrong-heartbeat'
  | 'non-canonical'
  | 'list-malformed'
  | 'allows-calls'
  | 'bad-signature'
  | 'evaluates-combination'
  | 'no-reassembly'
  | 'answers-oversize'
  | 'lenient-parse'
  | 'delivers-partial'

const KEYS: Record<string, string[]> = {
  heartbeat: ['type'],
  list_capabilities: ['type'],
  tool_call_request: ['type', 'id', 'capability_token', 'server_id', 'tool', 'params', 'governed_intent', 'approval_token', 'approval_tokens', 'threshold_approval_proposal', 'supplemental_authorization', 'execution_nonce'],
}

export async function startBrokenWire(path: string, faults: readonly WireFault[] = []): Promise<{ close(): Promise<void> }> {
  const has = (f: WireFault) => faults.includes(f)
  const signer = createSigner({ secret: generateSecret() })
  const server: Server = createServer(socket => serve(socket))
  await new Promise<void>(resolve => server.listen(path, resolve))

  function send(socket: Socket, message: Record<string, unknown>) {
    const text = has('non-canonical') ? JSON.stringify(message, null, 1) : canonicalJson(message)
    const payload = Buffer.from(text)
    const prefix = Buffer.alloc(4)
    prefix.writeUInt32BE(payload.length)
    socket.write(Buffer.concat([prefix, payload]))
  }

  function receipt(request: Record<string, unknown>, verdict: 'allow' | 'deny'): Record<string, unknown> {
    const parameterHash = sha256Hex(canonicalJson(request.params))
    const body = {
      timestamp: Math.floor(Date.now() / 1000), capability_id: '', tool_server: request.server_id, tool_name: request.tool,
      action: { parameters: request.params, parameter_hash: parameterHash }, receipt_kind: 'mediated_decision', boundary_class: 'prevent',
      tool_origin: 'host_executed_provider_reported', redaction_mode: 'none', trust_level: 'mediated',
      decision: verdict === 'allow' ? { verdict } : { verdict, reason: 'no capability', guard: 'CapabilityGuard' },
      content_hash: sha256Hex(parameterHash), policy_hash: sha256Hex(''), kernel_key: signer.publicKey,
    }
    const signed = signCoreReceipt(body, signer) as unknown as Record<string, unknown>
    const signature = signed.signature as string
    if (has('bad-signature')) signed.signature = `${signature[0] === 'a' ? 'b' : 'a'}${signature.slice(1)}`
    return signed
  }

  function answer(socket: Socket, message: Record<string, unknown>) {
    if (message.type === 'heartbeat') return send(socket, has('wrong-heartbeat') ? { type: 'heartbeat', at: Date.now() } : { type: 'heartbeat' })
    if (message.type === 'list_capabilities') return send(socket, has('list-malformed') ? { type: 'capability_list' } : { type: 'capability_list', capabilities: [] })
    const combination = message.approval_token !== undefined && Array.isArray(message.approval_tokens) && message.approval_tokens.length > 0
    const allow = has('allows-calls') || (combination && has('evaluates-combination'))
    const result = allow ? { status: 'ok', value: null } : { status: 'err', error: { code: 'capability_denied', detail: 'no capability' } }
    send(socket, { type: 'tool_call_response', id: message.id, result, receipt: receipt(message, allow ? 'allow' : 'deny') })
  }

  // a payload that is not a valid AgentMessage closes the transport (or, lenient, is answered)
  function payload(socket: Socket, bytes: Buffer): boolean {
    let message: Record<string, unknown> | undefined
    try {
      message = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
    } catch {
      message = undefined
    }
    const keys = message === undefined ? undefined : KEYS[String(message.type)]
    if (message === undefined || keys === undefined || Object.keys(message).some(k => !keys.includes(k))) {
      if (has('lenient-parse')) {
        send(socket, { type: 'heartbeat' })
        return true
      }
      socket.destroy()
      return false
    }
    answer(socket, message)
    return true
  }

  function serve(socket: Socket) {
    let buffer = Buffer.alloc(0)
    socket.on('data', chunk => {
      if (has('no-reassembly')) {
        payload(socket, chunk.subarray(4))
        return
      }
      buffer = Buffer.concat([buffer, chunk])
      while (buffer.length >= 4) {
        const length = buffer.readUInt32BE(0)
        if (length > 16_777_216) {
          if (has('answers-oversize')) send(socket, { type: 'heartbeat' })
          socket.destroy()
          return
        }
        if (buffer.length < 4 + length) return
        const bytes = buffer.subarray(4, 4 + length)
        buffer = buffer.subarray(4 + length)
        if (!payload(socket, bytes)) return
      }
    })
    socket.on('end', () => {
      if (buffer.length > 0 && has('delivers-partial')) send(socket, { type: 'heartbeat' })
      socket.end()
    })
    socket.on('error', () => socket.destroy())
  }

  return { close: () => new Promise<void>(resolve => server.close(() => resolve())) }
}
