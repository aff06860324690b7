// The store contract suites: one per store interface of store-ports.ts, run against the SQLite stores
// (@gate/sidecar, both drivers) and the PostgreSQL ones (postgres/pg-store-contracts.test.ts).
export * from './store-factory.js'
export * from './receipt-log-contract.js'
export * from './receipt-query-contract.js'
export * from './listed-receipt-store-contract.js'
export * from './revocation-store-contract.js'
export * from './budget-store-contract.js'
export * from './capability-store-contract.js'
export * from './enrolled-key-store-contract.js'
export * from './authority-store-contract.js'
export * from './approval-store-contract.js'
export * from './transparency-log-store-contract.js'
