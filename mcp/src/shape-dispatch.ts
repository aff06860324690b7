// The SDK's Protocol classifies each message it reads by trying zod schemas in turn (a result? an error?
// a request? a notification?): a request fails two full parses first, each building a ZodError, which
// cost the edges about a fifth of their CPU per tools/call (docs/performance.md). Every transport Gate
// connects has already checked each message against the SDK's JSONRPCMessageSchema (its stdio readers,
// the Streamable HTTP transport), so the members say what a message is; this hands it to the same
// Protocol handlers by them. Anything else still goes through the SDK's own classification.
import type { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage, Notification, Request, Result } from '@modelcontextprotocol/sdk/types.js'

interface ProtocolHandlers {
  _onrequest(message: JSONRPCMessage, extra: unknown): void
  _onnotification(message: JSONRPCMessage): void
  _onresponse(message: JSONRPCMessage): void
}

/** After `protocol.connect(transport)`: the SDK's classifier of `transport`, as a function of `message`. */
export function dispatchByShape(protocol: Protocol<Request, Notification, Result>, transport: Transport): void {
  transport.onmessage = shapeDispatcher(protocol, transport.onmessage)
}

/** The dispatcher of an already-connected protocol, for a tap that sits in front of it. */
export function shapeDispatcher(protocol: Protocol<Request, Notification, Result>, sdk: Transport['onmessage']): NonNullable<Transport['onmessage']> {
  const handlers = protocol as unknown as ProtocolHandlers
  return (message, extra) => {
    if ('method' in message) {
      if ('id' in message) handlers._onrequest(message, extra)
      else handlers._onnotification(message)
    } else if ('id' in message && ('result' in message || 'error' in message)) handlers._onresponse(message)
    else sdk?.(message, extra)
  }
}
