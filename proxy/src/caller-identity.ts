// Caller identity of a proxied request (spec 01, "Caller identity extracted by the proxy"): the SDK's
// chain without the cookie row — Authorization Bearer, then x-api-key, then anonymous; hashes only,
// `verified` false. One implementation, so the SDK and the proxy hash the same caller the same way.
import { extractCallerIdentity as extractFromHeaders, type CallerIdentity } from '@gate/sdk'
import type { IncomingHttpHeaders } from 'node:http'

export function extractCallerIdentity(headers: IncomingHttpHeaders): CallerIdentity {
  return extractFromHeaders(headers, null)
}
