// `@gate/trust/server`: trust-control as a service (`gate trust serve`), and what its host provides.
export * from './create-trust-server.js'
export * from './host-ports.js'
export * from './trust-server-options.js'
export * from './store-core-forms.js'
