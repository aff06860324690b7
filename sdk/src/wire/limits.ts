// The native wire's fixed values (spec 03: Native messages, Limits, Versioning).

/** The one wire version; agreed out of band by exact match, never negotiated in band. */
export const WIRE_VERSION = 'gate-wire-v1'

/** Bytes of the length prefix: an unsigned 32-bit big-endian count of the payload's bytes only. */
export const FRAME_PREFIX_BYTES = 4

/** The largest payload (16 MiB); a frame advertising more closes the transport unanswered. */
export const MAX_FRAME_PAYLOAD_BYTES = 16_777_216

/** The environment variable `gate run` gives the agent: the path of its Unix socket. */
export const WIRE_SOCKET_ENV = 'GATE_WIRE_SOCKET'

/** The environment variable `gate run` gives the agent: the wire version spoken on that socket. */
export const WIRE_VERSION_ENV = 'GATE_WIRE_VERSION'
