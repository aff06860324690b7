// `@gate/sdk` middleware core (Node). The edge build is `@gate/sdk/edge`.
export * from './create-gate-core.js'
export * from './shared.js'
