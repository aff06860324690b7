// runConformance: runs the checks against one sidecar URL, one after another, each bounded by a
// deadline, and returns the report. Traffic goes only to that URL and to the suite's own loopback
// fakes (sdk.* checks) and recording upstream (proxy.* checks).
import type { Signer } from '@gate/sdk'
import type { Check, CheckDefinition } from './check.js'
import { CheckSkipped } from './check.js'
import { ALL_CHECKS } from './checks/index.js'
import { CheckContext, NEEDS_PROXY } from './context.js'
import type { RecordingUpstream } from './fakes/recording-upstream.js'
import { UsageError } from './errors.js'
import { HttpClient } from './http-client.js'
import { findNeeds } from './needs.js'
import { loadPolicyDocument, type PolicyDocument } from './policy.js'
import type { ReceiptStoreAccess } from './receipt-store.js'
import { resultOf, summarize, type CheckResult, type Report } from './report.js'
import type { SdkUnderTest } from './sdk-under-test.js'

/** Options of runConformance; only sidecarUrl is required. */
export interface ConformanceOptions {
  /** Base URL of the sidecar (or `gate api protect`) under test, e.g. http://127.0.0.1:9090. */
  sidecarUrl: string
  /** Its control token (GATE_CONTROL_TOKEN); without it the issue/revoke checks are skipped. Default none. */
  controlToken?: string | null
  /** The OpenAPI document it was started with: a file path or an already loaded document. Default: the built-in pets document. */
  spec?: string | PolicyDocument
  /** Run only these check ids. Default: all. */
  only?: readonly string[]
  /** The SDK the sdk.* checks drive. Default none (those checks are skipped with `sdkNote`). */
  sdkUnderTest?: SdkUnderTest | null
  /** Why there is no SDK under test, shown on the skipped sdk.* checks. */
  sdkNote?: string
  /**
   * The sidecar was started with strict execution nonces. Then only the nonces.* checks run (the
   * others expect a sidecar without them and are skipped); without it the nonces.* checks are skipped.
   * Default false.
   */
  strictNonces?: boolean
  /**
   * A signer whose public key the sidecar trusts as a capability issuer (its `--trusted-issuer`, or
   * its own authority seed): the delegation and token-field checks mint tokens with it. Default none
   * (those checks are skipped).
   */
  issuer?: Signer | null
  /**
   * The sidecar's receipt store, for the checks that change a stored receipt behind its back
   * (`receipt-store` need): only a store the caller owns, such as the temporary one of
   * `--start-sidecar` (`gateReceiptFile`). Default none (those checks are skipped).
   */
  receiptStore?: ReceiptStoreAccess | null
  /**
   * The sidecar under test is a proxy (`gate api protect`) forwarding to this upstream, which records
   * what arrives (startRecordingUpstream): the proxy.* checks run. Default none (they are skipped).
   */
  proxyUpstream?: RecordingUpstream | null
  /** Deadline of one HTTP exchange. Default 5000 ms. */
  requestTimeoutMs?: number
  /** Called after each check, e.g. for progress output. */
  onResult?: (result: CheckResult) => void
}

/** The list of checks (id, description, spec reference, required), without their code. */
export const CHECKS: readonly CheckDefinition[] = Object.freeze(
  ALL_CHECKS.map(({ id, description, specRef, required, needs }) => Object.freeze({ id, description, specRef, required, ...(needs === undefined ? {} : { needs }) })),
)

const NEEDS_RECEIPT_STORE = 'needs a receipt store the suite owns, to alter a receipt in it: run gate-conformance --start-sidecar'
const NEEDS_STRICT_NONCES = 'needs --strict-nonces and a sidecar started with strict execution nonces'
const NEEDS_NO_STRICT_NONCES = 'expects a sidecar without strict execution nonces (this run has --strict-nonces)'

/** Deadline of one check, its own waits included (the expiry check waits about 3 s). */
export const CHECK_DEADLINE_MS = 45_000

/** Runs the checks and returns the report; throws UsageError for bad options. */
export async function runConformance(options: ConformanceOptions): Promise<Report> {
  const sidecarUrl = checkSidecarUrl(options.sidecarUrl)
  const selected = selectChecks(options.only)
  const policy = typeof options.spec === 'object' ? options.spec : await loadPolicyDocument(options.spec)
  const http = new HttpClient({ baseUrl: sidecarUrl, timeoutMs: options.requestTimeoutMs ?? 5000 })
  const ctx = new CheckContext({
    http,
    policy,
    controlToken: options.controlToken ?? null,
    sdkUnderTest: options.sdkUnderTest ?? null,
    sdkNote: options.sdkNote ?? 'no SDK under test was given',
    strictNonces: options.strictNonces === true,
    issuer: options.issuer ?? null,
    receiptStore: options.receiptStore ?? null,
    proxyUpstream: options.proxyUpstream ?? null,
  })
  const started = Date.now()
  const checked: CheckResult[] = []
  const documentChecks = new Set<string>()
  let found
  try {
    for (const check of selected) {
      ctx.startCheck()
      const result = await runOne(check, ctx)
      if (ctx.usedDocument) documentChecks.add(check.id)
      checked.push(result)
      options.onResult?.(result)
    }
    const tokenChecks = new Set(selected.filter(c => c.needs?.includes('control-token')).map(c => c.id))
    found = await findNeeds(ctx, checked, documentChecks, tokenChecks)
  } finally {
    await http.close()
  }
  const { needs, results } = found
  return { sidecarUrl, spec: policy.source, startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, results, needs, ...summarize(results) }
}

async function runOne(check: Check, ctx: CheckContext): Promise<CheckResult> {
  const t0 = Date.now()
  // the sidecar's nonce mode decides first: a check for the other mode is skipped whatever else it needs
  const nonceCheck = check.needs?.includes('strict-nonces') === true
  if (nonceCheck && !ctx.strictNonces) return resultOf(check, 'SKIP', NEEDS_STRICT_NONCES, 0)
  if (!nonceCheck && ctx.strictNonces) return resultOf(check, 'SKIP', NEEDS_NO_STRICT_NONCES, 0)
  if (check.needs?.includes('control-token') && ctx.controlToken === null) return resultOf(check, 'SKIP', 'needs --control-token', 0)
  if (check.needs?.includes('sdk-under-test') && ctx.sdkUnderTest === null) return resultOf(check, 'SKIP', ctx.sdkNote, 0)
  if (check.needs?.includes('issuer-key') && ctx.issuer === null) return resultOf(check, 'SKIP', 'needs --issuer-seed-file', 0)
  if (check.needs?.includes('receipt-store') && ctx.receiptStore === null) return resultOf(check, 'SKIP', NEEDS_RECEIPT_STORE, 0)
  if (check.needs?.includes('proxy') && ctx.proxyUpstream === null) return resultOf(check, 'SKIP', NEEDS_PROXY, 0)
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      check.run(ctx),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the check did not finish within ${CHECK_DEADLINE_MS} ms`)), CHECK_DEADLINE_MS)
      }),
    ])
    return resultOf(check, 'PASS', null, Date.now() - t0)
  } catch (err) {
    if (err instanceof CheckSkipped) return resultOf(check, 'SKIP', err.message, Date.now() - t0)
    return resultOf(check, 'FAIL', err instanceof Error ? err.message : String(err), Date.now() - t0)
  } finally {
    clearTimeout(timer)
  }
}

function checkSidecarUrl(value: unknown): string {
  let url: URL
  try {
    url = new URL(String(value))
  } catch {
    throw new UsageError(`sidecarUrl must be an http:// or https:// URL, got ${JSON.stringify(value)}`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new UsageError(`sidecarUrl must be an http:// or https:// URL without credentials, query or fragment, got ${JSON.stringify(value)}`)
  }
  return url.href.replace(/\/+$/, '')
}

function selectChecks(only: readonly string[] | undefined): readonly Check[] {
  if (only === undefined || only.length === 0) return ALL_CHECKS
  const known = new Set(ALL_CHECKS.map(c => c.id))
  const unknown = only.filter(id => !known.has(id))
  if (unknown.length > 0) throw new UsageError(`unknown check id(s): ${unknown.join(', ')} (list them with --list)`)
  const wanted = new Set(only)
  return ALL_CHECKS.filter(c => wanted.has(c.id))
}
