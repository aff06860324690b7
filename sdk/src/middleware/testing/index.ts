// `@gate/sdk/middleware-testing`: test support for the adapters' end-to-end tests. Node only.
export * from './fake-sidecar.js'
export * from './sidecar-process.js'
export * from './pets-spec.js'
export * from './http-client.js'
export * from './capture-proxy.js'
export * from './adapter-suite.js'
export * from './example-walkthrough.js'
export * from './test-listen.js'
