// Test helpers (subpath `@gate/trust/testing`): the store contract suites both backends run, a real
// PostgreSQL server for tests, receipt rows and bodies. Not part of the runtime surface.
export * from './postgres-server.js'
export * from './receipt-rows.js'
export * from './contracts/index.js'
