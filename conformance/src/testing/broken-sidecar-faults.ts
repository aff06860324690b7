// The broken sidecar's fault table (test support, beside broken-sidecar.ts): each fault breaks exactly
// one behaviour, so a test can show that the check aimed at that behaviour FAILS.

/** One broken behaviour, named after what the sidecar does wrong. */
export const SIDECAR_FAULTS = [
  'text-content-type', // /gate/live answers Content-Type text/plain
  'deny-status-403', // /gate/evaluate answers HTTP 403 for a deny verdict
  'live-backends-set', // /gate/live names its backends
  'health-status-mismatch', // /gate/health answers 200 with status degraded
  'live-wrong-key', // /gate/live names a key other than the signing key
  'bad-json-500', // a body that is not JSON answers 500
  'no-request-validation', // any JSON body is evaluated as if it were a GateHttpRequest
  'accept-any-method', // a method outside the seven is evaluated (as unsafe)
  'accept-credential-headers', // raw Authorization/Cookie headers in GateHttpRequest.headers are accepted
  'no-caller-validation', // any caller value is accepted
  'no-duplicate-detection', // duplicate query keys are not detected (JSON.parse keeps the last)
  'naive-duplicate-detection', // duplicates are found by raw spelling only ("a" vs "\u0061" missed)
  'nonce-blank-ignored', // a blank nonce header counts as absent
  'nonce-unchecked', // any nonce header value is accepted
  'deny-safe-get', // GET on a matched route is deny-by-default
  'deny-head-options', // HEAD and OPTIONS are deny-by-default
  'head-method-rule', // HEAD is decided by the method rule, not as GET of its route
  'case-sensitive-method-rule', // a path differing from a route only in letter case gets the method rule
  'allow-mutating-without-token', // matched deny-by-default routes allow without a token
  'allow-unmatched', // unmatched paths are allowed whatever the method
  'ignore-side-effects', // x-gate-side-effects is not read
  'ignore-approval-precedence', // x-gate-side-effects is read before x-gate-approval-required
  'trust-client-route-pattern', // the client's route_pattern is used
  'unmatched-pattern-wildcard', // unmatched requests record route_pattern "*"
  'param-matches-rest', // a trailing {param} matches the rest of the path
  'ignore-supplemental', // supplemental_authorization is ignored
  'empty-deny-details', // deny verdicts carry details with every field null
  'answer-verdict-differs', // the answer's deny reason differs from the receipt's
  'omit-evidence', // the evaluate answer has no evidence member
  'allow-any-token', // a token that does not parse counts as valid
  'trust-any-issuer', // tokens verify against their own issuer key
  'ignore-expiry', // token expiry is not checked
  'ignore-scope', // grants are not matched against the route
  'skip-token-signature', // a token naming the trusted issuer is not signature-checked
  'allow-unknown-capability-id', // an unknown capability_id counts as a valid capability
  'deny-all-tokens', // every presented token is denied
  'base64-tokens-only', // a token sent as plain JSON is refused
  'ignore-query-token', // gate_capability is not read
  'query-token-wins', // gate_capability wins over the header
  'ignore-capability-id', // capability_id is not looked up
  'capability-id-without-auth', // capability_id is looked up for any caller, not only one with the control token
  'ignore-revocation', // revocations are not checked
  'ignore-max-invocations', // a grant's max_invocations is not counted
  'per-token-budgets', // budgets are counted per token id: siblings of a delegation link each get its limits
  'ignore-delegation-scope', // a child its delegatee signed is trusted like its signer: no attenuation proof
  'deny-delegated-children', // every child its delegatee signed is denied
  'ignore-token-fields', // token fields (schema, caveats, attenuations, aggregate budgets, share) are not read
  'ignore-grant-fields', // grants match by server and tool only (constraints, operations, DPoP, cost caps unread)
  'ignore-restricted', // x-gate-sensitivity restricted asks for no approval
  'core-id-copied', // served core receipts carry the HTTP receipt's id
  'sign-unverified-receipts', // a stored receipt's core form is signed on read without verifying the stored text
  'revocation-only-on-deny-routes', // revocations are checked on deny-by-default routes only
  'ignore-approval', // a valid token allows an approval-gated route
  'approval-as-403', // a pending approval is a plain 403 CapabilityGuard deny
  'approval-reusable', // an approved approval allows its request any number of times
  'open-control-routes', // /v1 routes need no control token
  'stale-receipt-id', // the receipt id is not the hash of the receipt
  'unsigned-receipts', // receipts carry no signature
  'wrong-semantics', // receipts say tool_origin host_executed_unmediated
  'content-hash-keeps-capability', // content_hash includes the gate_capability parameter
  'content-hash-without-query', // content_hash leaves the query out
  'caller-hash-subject-only', // caller_identity_hash covers the subject only
  'caller-hash-as-sent', // caller_identity_hash hashes the caller as written, defaults not filled in
  'own-request-id', // the receipt gets a request_id of its own
  'allow-status-for-deny', // deny receipts record response_status 200
  'policy-hash-zero', // policy_hash is 64 zeros
  'timestamp-zero', // receipts are dated 1970
  'no-metadata', // receipts carry no metadata
  'verify-untrusted-own-key', // /gate/verify does not trust the sidecar's own key
  'verify-deny-authorized', // /gate/verify authorizes any ok receipt, deny included
  'verify-skip-id', // /gate/verify reports receipt_id_valid true without recomputing
  'verify-id-only', // /gate/verify reports signature_valid from the id check alone
  'verify-trust-embedded-key', // /gate/verify trusts whatever key a receipt names
  'verify-ed25519-only', // /gate/verify cannot verify P-256 or P-384 signatures
  'verify-skip-parameter-hash', // /gate/verify reports parameter_hash_valid true without looking
  'verify-skip-semantics', // /gate/verify ignores the authority semantics
  'verify-checks-timestamp', // /gate/verify rejects receipts older or newer than a day
  'verify-any-verdict-tag', // /gate/verify answers 200 with result "maybe" for an unknown verdict tag
  'verify-raw-result', // /gate/verify reports result "cancel" instead of "cancelled"
  'verify-accepts-anything', // /gate/verify answers 200 for a body that is not a receipt
  'verify-omit-field', // /gate/verify leaves signer_key_hex out
  'evaluate-limit-1mib', // /gate/evaluate reads at most 1 MiB
  'verify-limit-64kib', // /gate/verify reads at most 64 KiB
  'accept-oversized', // no body limit at all
  'limit-content-length-only', // the limit is enforced on Content-Length only, not on chunked bodies
  'drop-proto-keys', // query keys named __proto__ are lost before hashing
  'content-hash-code-point-sort', // query keys are sorted by code point, not UTF-16 code units
  'control-chars-500', // control characters in the path answer 500
  'large-integers-500', // integers beyond 2^53 answer 500
  'deep-nesting-500', // deeply nested bodies answer 500
  'huge-headers-500', // headers over 16 KiB answer 500
  'path-as-sent-only', // a path is matched as sent only: no trailing-slash or %2F reading reaches a stricter route
  'format-suffix-ignored', // a format suffix (/admin/export.json) is matched as sent
  // with an upstream (the proxy side) only:
  'forward-routing-headers', // X-Original-URL, X-Forwarded-*, X-Gate-* and the like are forwarded as sent
  // with strictNonces only:
  'no-nonce-preflight', // deny-by-default requests are allowed without a nonce
  'nonce-never-accepted', // a presented nonce is never found
  'nonce-reusable', // a nonce can be used any number of times
  'nonce-never-expires', // a nonce past its expires_at is still accepted
  'nonce-expiry-from-start', // every nonce expires one lifetime after the sidecar started, not after its issue
  'nonce-signature-unchecked', // a presented nonce is looked up by id, its signature ignored
  'nonce-unbound', // a nonce allows any request it is presented with
  'nonce-header-ignored', // X-Gate-Execution-Nonce is checked for form but not looked up
  'nonce-on-every-route', // session-allowed routes get the preflight too
] as const

export type SidecarFault = (typeof SIDECAR_FAULTS)[number]
