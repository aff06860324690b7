// @gate/conformance: the protocol suite as a library (runConformance, CHECKS) for SDK test suites.
export { runConformance, CHECKS, CHECK_DEADLINE_MS, type ConformanceOptions } from './run-conformance.js'
export type { CheckDefinition, CheckNeed, CheckResultKind } from './check.js'
export { formatJson, formatTable, type CheckResult, type Report } from './report.js'
export type { SdkAnswer, SdkRequest, SdkUnderTest, SdkUnderTestOptions } from './sdk-under-test.js'
export { loadGateSdkCore } from './sdk-under-test.js'
export { DEFAULT_SPEC_TEXT } from './default-spec.js'
export { loadPolicyDocument, type PolicyDocument, type PolicyRoute } from './policy.js'
export { UsageError } from './errors.js'
