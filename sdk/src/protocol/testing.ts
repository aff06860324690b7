// @gate/sdk/testing: example receipts, signers and capability tokens for tests across packages.
export * from './receipt-examples.js'
export * from './capability-examples.js'
