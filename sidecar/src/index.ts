// @gate/sidecar's library surface: the OpenAPI conversion (spec 01, tools_from_spec), the kernel and
// the service assembly. The `gate` command is sidecar/src/cli/main.ts.
export * from '@gate/openapi'
export { Kernel, type KernelOptions, type EvaluateInput, type Evaluation } from './kernel/kernel.js'
export type * from './kernel/ports.js'
export { startService, type ServiceOptions, type RunningService } from './app/create-service.js'
export * from './errors.js'
