// The middleware core's steps one by one, for the CPU budget benchmark (bench/src/sdk/cpu-budget.ts),
// which times each alone and in the order decide() runs them. Not part of the middleware's API.
export { receiptBindingProblem } from '../receipt-binding.js'
export { selectForwardHeaders } from '../forward-headers.js'
export { toOutcome } from '../to-outcome.js'
export { createUndiciTransport } from '../undici-transport.js'
export { createSocketTransport } from '../socket-transport.js'
