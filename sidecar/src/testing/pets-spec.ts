// The OpenAPI document the sidecar's tests evaluate against (one route per policy rule of spec 01). It
// lives in @gate/sdk's test helpers so the SDK, the proxy and the conformance suite share one copy.
export { PETS_SPEC_YAML } from '@gate/sdk/middleware-testing'
