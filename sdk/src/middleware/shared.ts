// What the Node and edge entry points both export.
export * from './gate-types.js'
export * from './options.js'
export * from './gate-core.js'
export * from './caller-identity.js'
export * from './query.js'
export * from './route-pattern.js'
export * from './sidecar-client.js'
export * from './fetch-transport.js'
