export * from './errors.js'
export * from './types.js'
export * from './protocol/index.js'
export * from './middleware/index.js'
