// `@gate/sdk/wire`: Gate's native framed wire (spec 03, Native messages; docs/wire.md). The codec
// (frame reader and encoder, the two message parsers) has no node: imports; FrameConnection and
// WireClient run on Node sockets.
export * from './limits.js'
export * from './messages.js'
export { RawJson } from './raw-json.js'
export { encodeFrame, messageText } from './frame-encoder.js'
export { FrameReader } from './frame-reader.js'
export { parseAgentMessage, parseKernelMessage } from './message-parser.js'
export { FrameConnection, type FrameConnectionOptions } from './frame-connection.js'
export { WireCall, type WireCallOutcome } from './wire-call.js'
export { WireClient, type WireCallInput, type WireTarget } from './wire-client.js'
export { WireProtocolError, isWireProtocolError, type WireFailureKind } from '../errors.js'
