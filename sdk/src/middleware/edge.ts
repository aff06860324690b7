// `@gate/sdk/edge`: the middleware core for the edge runtime, plus the protocol and error types.
export * from './create-edge-gate-core.js'
export * from './shared.js'
export * from '../errors.js'
export * from '../types.js'
