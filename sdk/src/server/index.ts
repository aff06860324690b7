// Node-only helpers for Gate's own HTTP services; not for app code. Subpath `@gate/sdk/server`.
export * from './bearer-token.js'
export * from './body-budget.js'
export * from './control-token-rule.js'
export * from './loop-pressure.js'
export * from './parse-json-body.js'
export * from './read-body.js'
export * from './respond.js'
export * from './trace-spans.js'
