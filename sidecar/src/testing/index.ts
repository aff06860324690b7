// Test and benchmark helpers (subpath `@gate/sidecar/testing`); not part of the runtime surface.
export * from './pets-spec.js'
export * from './spawn-gate.js'
export * from './http-client.js'
export * from './memory-ports.js'
export * from './evaluate-requests.js'
export * from './kernel-setup.js'
export * from './mcp-session.js'
export * from './tcp-relay.js'
