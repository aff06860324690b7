export * from './ports.js'
export * from './errors.js'
export * from './routes/capabilities.js'
