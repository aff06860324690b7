export * from './gate.js'
