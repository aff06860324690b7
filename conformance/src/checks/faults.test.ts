// Every check is shown to catch what it is for: against the broken sidecar with no fault (and the
// minimal SDK with no fault) every check passes; with the fault a check targets, that check FAILS.
// A check with no fault that makes it fail is not a check, so the set of ids below must equal CHECKS.
// The broken sidecar forwards to a recording upstream as a proxy does, so the proxy.* checks run too.
import t, { type Test } from 'tap'
import { CHECKS, runConformance } from '../index.js'
import { createBrokenSdk, type SdkFault } from '../testing/broken-sdk.js'
import { createSigner, generateSecret } from '@gate/sdk'
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js'
import { startBrokenSidecar, type BrokenSidecarOptions, type SidecarFault } from '../testing/broken-sidecar.js'
import type { ReceiptStoreAccess } from '../receipt-store.js'

const CONTROL_TOKEN = 'conformance-control-token'
// the key the broken sidecar trusts as an issuer (--trusted-issuer), for the delegation and token-field checks
const ISSUER = createSigner({ secret: generateSecret() })
const TRUSTED = [ISSUER.publicKey]
// nonces.expired-denied skips against longer-lived nonces; 2 s, not 1, so that a nonce issued late in a
// second still lives a whole second for the other checks' retries
const SHORT_NONCE_TTL_SECONDS = 2

interface Fault {
  sidecar?: SidecarFault[]
  /** For the sdk.* checks against the suite's own dead and lying fakes, the fault is in the SDK. */
  sdk?: SdkFault[]
  /** The check runs against a sidecar with strict execution nonces (the nonces.* checks). */
  strictNonces?: true
  /** The broken sidecar's nonce lifetime, when the check needs nonces to expire while it runs. */
  nonceTtlSeconds?: number
}

const FAULT_FOR: Record<string, Fault> = {
  'transport.json-content-type': { sidecar: ['text-content-type'] },
  'transport.evaluate-200-for-deny': { sidecar: ['deny-status-403'] },
  'health.live': { sidecar: ['live-backends-set'] },
  'health.ready': { sidecar: ['health-status-mismatch'] },
  'health.live-kernel-key': { sidecar: ['live-wrong-key'] },
  'evaluate.bad-json-400': { sidecar: ['bad-json-500'] },
  'evaluate.not-object-400': { sidecar: ['no-request-validation'] },
  'evaluate.missing-field-400': { sidecar: ['no-request-validation'] },
  'evaluate.wrong-type-400': { sidecar: ['no-request-validation'] },
  'evaluate.unknown-method-400': { sidecar: ['accept-any-method'] },
  'evaluate.bad-caller-400': { sidecar: ['no-caller-validation'] },
  'evaluate.duplicate-query-key-400': { sidecar: ['no-duplicate-detection'] },
  'evaluate.nonce-blank-400': { sidecar: ['nonce-blank-ignored'] },
  'evaluate.nonce-malformed-400': { sidecar: ['nonce-unchecked'] },
  'evaluate.allow-safe-get': { sidecar: ['deny-safe-get'] },
  'evaluate.allow-safe-methods-unmatched': { sidecar: ['deny-head-options'] },
  'evaluate.deny-unsafe-no-token': { sidecar: ['allow-mutating-without-token'] },
  'evaluate.deny-unsafe-unmatched': { sidecar: ['allow-unmatched'] },
  'evaluate.side-effects-false-allows': { sidecar: ['ignore-side-effects'] },
  'evaluate.side-effects-true-denies': { sidecar: ['ignore-side-effects'] },
  'evaluate.approval-required-denies': { sidecar: ['ignore-approval-precedence'] },
  'evaluate.head-decided-as-get': { sidecar: ['head-method-rule'] },
  'evaluate.letter-case-denied': { sidecar: ['case-sensitive-method-rule'] },
  'evaluate.path-readings-denied': { sidecar: ['path-as-sent-only'] },
  'evaluate.route-pattern-rematched': { sidecar: ['trust-client-route-pattern'] },
  'evaluate.unmatched-records-raw-path': { sidecar: ['unmatched-pattern-wildcard'] },
  'evaluate.param-matches-one-segment': { sidecar: ['param-matches-rest'] },
  'evaluate.supplemental-authorization-denied': { sidecar: ['ignore-supplemental'] },
  'evaluate.deny-details': { sidecar: ['empty-deny-details'] },
  'evaluate.verdict-matches-receipt': { sidecar: ['answer-verdict-differs'] },
  'evaluate.response-schema': { sidecar: ['omit-evidence'] },
  'capabilities.garbage-token-denied': { sidecar: ['allow-any-token'] },
  'capabilities.untrusted-issuer-denied': { sidecar: ['trust-any-issuer'] },
  'capabilities.expired-denied': { sidecar: ['ignore-expiry'] },
  'capabilities.wrong-scope-denied': { sidecar: ['ignore-scope'] },
  'capabilities.tampered-token-denied': { sidecar: ['skip-token-signature'] },
  'capabilities.unknown-capability-id-denied': { sidecar: ['allow-unknown-capability-id'] },
  'capabilities.valid-token-allows': { sidecar: ['deny-all-tokens'] },
  'capabilities.valid-token-json-form': { sidecar: ['base64-tokens-only'] },
  'capabilities.query-parameter': { sidecar: ['ignore-query-token'] },
  'capabilities.header-wins': { sidecar: ['query-token-wins'] },
  'capabilities.capability-id-field': { sidecar: ['ignore-capability-id'] },
  'capabilities.capability-id-needs-control-token': { sidecar: ['capability-id-without-auth'] },
  'capabilities.revoked-denied': { sidecar: ['ignore-revocation'] },
  'capabilities.revoked-denied-any-route': { sidecar: ['revocation-only-on-deny-routes'] },
  'capabilities.max-invocations-enforced': { sidecar: ['ignore-max-invocations'] },
  'capabilities.delegation-widening-denied': { sidecar: ['ignore-delegation-scope'] },
  'capabilities.delegation-attenuated-allowed': { sidecar: ['deny-delegated-children'] },
  'capabilities.delegated-budget-across-siblings': { sidecar: ['per-token-budgets'] },
  'capabilities.token-fields-enforced': { sidecar: ['ignore-token-fields'] },
  'capabilities.grant-fields-enforced': { sidecar: ['ignore-grant-fields'] },
  'capabilities.restricted-requires-approval': { sidecar: ['ignore-restricted'] },
  'capabilities.approval-not-allowed': { sidecar: ['ignore-approval'] },
  'capabilities.approval-pending-409': { sidecar: ['approval-as-403'] },
  'capabilities.approval-approved-once': { sidecar: ['approval-reusable'] },
  'capabilities.control-requires-token': { sidecar: ['open-control-routes'] },
  'nonces.preflight-incomplete': { sidecar: ['no-nonce-preflight'], strictNonces: true },
  'nonces.retry-allowed': { sidecar: ['nonce-never-accepted'], strictNonces: true },
  'nonces.single-use': { sidecar: ['nonce-reusable'], strictNonces: true },
  'nonces.expired-denied': { sidecar: ['nonce-never-expires'], strictNonces: true, nonceTtlSeconds: SHORT_NONCE_TTL_SECONDS },
  'nonces.forged-denied': { sidecar: ['nonce-signature-unchecked'], strictNonces: true },
  'nonces.bound-to-request': { sidecar: ['nonce-unbound'], strictNonces: true },
  'nonces.header-retry-allowed': { sidecar: ['nonce-header-ignored'], strictNonces: true },
  'nonces.safe-routes-exempt': { sidecar: ['nonce-on-every-route'], strictNonces: true },
  'receipt.id-recomputed': { sidecar: ['stale-receipt-id'] },
  'receipt.signature-valid': { sidecar: ['unsigned-receipts'] },
  'receipt.authority-semantics': { sidecar: ['wrong-semantics'] },
  'receipt.content-hash': { sidecar: ['content-hash-without-query'] },
  'receipt.content-hash-drops-capability': { sidecar: ['content-hash-keeps-capability'] },
  'receipt.caller-identity-hash': { sidecar: ['caller-hash-subject-only'] },
  'receipt.caller-hash-defaults': { sidecar: ['caller-hash-as-sent'] },
  'receipt.request-binding': { sidecar: ['own-request-id'] },
  'receipt.response-status': { sidecar: ['allow-status-for-deny'] },
  'receipt.policy-hash': { sidecar: ['policy-hash-zero'] },
  'receipt.timestamp-current': { sidecar: ['timestamp-zero'] },
  'receipt.decision-metadata': { sidecar: ['no-metadata'] },
  'receipt.core-verification-order': { sidecar: ['core-id-copied'] },
  'receipt.tampered-store-unsigned': { sidecar: ['sign-unverified-receipts'] },
  'verify.genuine-allow': { sidecar: ['verify-untrusted-own-key'] },
  'verify.genuine-deny': { sidecar: ['verify-deny-authorized'] },
  'verify.tampered-field': { sidecar: ['verify-skip-id'] },
  'verify.tampered-id-recomputed': { sidecar: ['verify-id-only'] },
  'verify.bad-signature': { sidecar: ['verify-id-only'] },
  'verify.foreign-signer': { sidecar: ['verify-trust-embedded-key'] },
  'verify.ecdsa-signatures': { sidecar: ['verify-ed25519-only'] },
  'verify.malformed-content-hash': { sidecar: ['verify-skip-parameter-hash'] },
  'verify.authority-semantics': { sidecar: ['verify-skip-semantics'] },
  'verify.timestamp-ignored': { sidecar: ['verify-checks-timestamp'] },
  'verify.result-mapping': { sidecar: ['verify-raw-result'] },
  'verify.unknown-verdict-tag': { sidecar: ['verify-any-verdict-tag'] },
  'verify.not-a-receipt-400': { sidecar: ['verify-accepts-anything'] },
  'verify.response-schema': { sidecar: ['verify-omit-field'] },
  'limits.evaluate-10mib': { sidecar: ['evaluate-limit-1mib'] },
  'limits.evaluate-10mib-plus-1': { sidecar: ['accept-oversized'] },
  'limits.evaluate-chunked-over-limit': { sidecar: ['limit-content-length-only'] },
  'limits.verify-1mib': { sidecar: ['verify-limit-64kib'] },
  'limits.verify-1mib-plus-1': { sidecar: ['accept-oversized'] },
  'limits.verify-chunked-over-limit': { sidecar: ['limit-content-length-only'] },
  'hostile.duplicate-query-key-escaped': { sidecar: ['naive-duplicate-detection'] },
  'hostile.raw-credential-headers': { sidecar: ['accept-credential-headers'] },
  'hostile.proto-keys': { sidecar: ['drop-proto-keys'] },
  'hostile.unicode-content': { sidecar: ['content-hash-code-point-sort'] },
  'hostile.control-characters': { sidecar: ['control-chars-500'] },
  'hostile.large-integers': { sidecar: ['large-integers-500'] },
  'hostile.deep-nesting': { sidecar: ['deep-nesting-500'] },
  'hostile.huge-headers': { sidecar: ['huge-headers-500'] },
  'proxy.routing-headers-dropped': { sidecar: ['forward-routing-headers'] },
  'proxy.path-variants-not-forwarded': { sidecar: ['path-as-sent-only'] },
  'proxy.format-suffix-not-forwarded': { sidecar: ['format-suffix-ignored'] },
  'sdk.genuine-allow-passes': { sidecar: ['live-wrong-key'] },
  'sdk.genuine-deny-403': { sidecar: ['allow-mutating-without-token'] },
  'sdk.unreachable-503': { sdk: ['fail-open'] },
  'sdk.timeout-504': { sdk: ['fail-open'] },
  'sdk.error-status-502': { sdk: ['errors-as-500'] },
  'sdk.garbage-502': { sdk: ['errors-as-500'] },
  'sdk.schema-violation-502': { sdk: ['no-schema-check'] },
  'sdk.impostor-502': { sdk: ['trust-embedded-key'] },
  'sdk.tampered-receipt-502': { sdk: ['no-receipt-check'] },
  'sdk.replayed-receipt-502': { sdk: ['no-binding-check'] },
  'sdk.verdict-mismatch-502': { sdk: ['no-binding-check'] },
}

t.test('every check id has a fault, and every fault entry names a check', async t => {
  t.same(Object.keys(FAULT_FOR).sort(), CHECKS.map(c => c.id).sort())
})

const NONCE_CHECK_IDS = CHECKS.filter(c => c.needs?.includes('strict-nonces')).map(c => c.id)

/** The broken sidecar in front of a recording upstream of its own; both closed in teardown. */
async function startProxying(t: Test, options: BrokenSidecarOptions): Promise<{ url: string; upstream: RecordingUpstream; receiptStore: ReceiptStoreAccess }> {
  const upstream = await startRecordingUpstream()
  t.teardown(() => upstream.close())
  const sidecar = await startBrokenSidecar({ ...options, upstream: upstream.url })
  t.teardown(() => sidecar.close())
  return { url: sidecar.url, upstream, receiptStore: sidecar.receiptStore }
}

t.test('without faults every check passes: the nonces.* checks with strict nonces, the others without', async t => {
  t.ok(NONCE_CHECK_IDS.length > 0)
  const plain = await startProxying(t, { controlToken: CONTROL_TOKEN, trustedIssuers: TRUSTED })
  const report = await runConformance({ sidecarUrl: plain.url, controlToken: CONTROL_TOKEN, sdkUnderTest: createBrokenSdk(), issuer: ISSUER, proxyUpstream: plain.upstream, receiptStore: plain.receiptStore })
  const notPassed = report.results.filter(r => r.result !== 'PASS' && !NONCE_CHECK_IDS.includes(r.id)).map(r => `${r.id}: ${r.result} ${r.detail ?? ''}`)
  t.same(notPassed, [], 'every other check passes against the fault-free fake')
  for (const r of report.results.filter(r => NONCE_CHECK_IDS.includes(r.id))) t.equal(r.result, 'SKIP', `${r.id} is skipped without --strict-nonces`)
  t.equal(report.ok, true)

  const strict = await startBrokenSidecar({ controlToken: CONTROL_TOKEN, strictNonces: true, nonceTtlSeconds: SHORT_NONCE_TTL_SECONDS })
  t.teardown(() => strict.close())
  const strictReport = await runConformance({ sidecarUrl: strict.url, controlToken: CONTROL_TOKEN, strictNonces: true })
  const results = new Map(strictReport.results.map(r => [r.id, r]))
  for (const id of NONCE_CHECK_IDS) t.equal(results.get(id)?.result, 'PASS', `${id} passes with strict nonces: ${results.get(id)?.detail ?? ''}`)
  const others = strictReport.results.filter(r => !NONCE_CHECK_IDS.includes(r.id))
  t.ok(others.every(r => r.result === 'SKIP' && /without strict execution nonces/.test(r.detail ?? '')), 'with --strict-nonces every other check is skipped, saying why')
  t.equal(strictReport.ok, true)
})

// The second half of nonces.expired-denied: a sidecar that denies every nonce once some time has passed
// (here: expiry counted from its start) must fail it too, on the fresh nonce.
t.test('nonces.expired-denied also fails against sidecar nonce-expiry-from-start', async t => {
  const sidecar = await startBrokenSidecar({ controlToken: CONTROL_TOKEN, faults: ['nonce-expiry-from-start'], strictNonces: true, nonceTtlSeconds: SHORT_NONCE_TTL_SECONDS })
  t.teardown(() => sidecar.close())
  const report = await runConformance({ sidecarUrl: sidecar.url, controlToken: CONTROL_TOKEN, only: ['nonces.expired-denied'], strictNonces: true })
  const result = report.results[0]
  t.equal(result?.result, 'FAIL', `${result?.result} ${result?.detail ?? ''}`)
  t.match(result?.detail, /fresh execution_nonce/, 'on the fresh nonce, the half this fault breaks')
})

for (const check of CHECKS) {
  const fault = FAULT_FOR[check.id]
  if (fault === undefined) continue
  const label = [...(fault.sidecar ?? []).map(f => `sidecar ${f}`), ...(fault.sdk ?? []).map(f => `sdk ${f}`)].join(', ')
  t.test(`${check.id} fails against ${label}`, async t => {
    const strictNonces = fault.strictNonces === true
    const sidecar = await startProxying(t, { controlToken: CONTROL_TOKEN, faults: fault.sidecar ?? [], strictNonces, nonceTtlSeconds: fault.nonceTtlSeconds, trustedIssuers: TRUSTED })
    const report = await runConformance({ sidecarUrl: sidecar.url, controlToken: CONTROL_TOKEN, only: [check.id], sdkUnderTest: createBrokenSdk(fault.sdk ?? []), strictNonces, issuer: ISSUER, proxyUpstream: sidecar.upstream, receiptStore: sidecar.receiptStore })
    const result = report.results[0]
    t.equal(result?.result, 'FAIL', `${check.id}: ${result?.result} ${result?.detail ?? ''}`)
    t.equal(report.ok, !check.required, 'a failed required check fails the run; an advisory one does not')
  })
}
