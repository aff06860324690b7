// What the sidecar under test lacked, when checks failed or were skipped for want of it: the OpenAPI
// document the expectations come from, or its control token. Found after the run, said once at the end
// of the report, and pointed to from each check it explains. A diagnosis, never a verdict: the checks'
// results stand as they are.
import { sha256Hex } from '@gate/sdk'
import type { CheckContext } from './context.js'
import type { CheckResult } from './report.js'

/** How the report points a failed check to the needs below it. */
const SEE_NEEDS = ' (see "the sidecar under test needs" below)'

/** What the run found missing, and the results amended to point at it. */
export interface Needs {
  needs: string[]
  results: CheckResult[]
}

/**
 * Finds what the sidecar lacked. `documentChecks` are the ids of the checks that read the document;
 * `tokenChecks` those that need the control token.
 */
export async function findNeeds(ctx: CheckContext, results: readonly CheckResult[], documentChecks: ReadonlySet<string>, tokenChecks: ReadonlySet<string>): Promise<Needs> {
  const needs: string[] = []
  const explained = new Set<string>()

  const documentFailures = results.filter(r => r.result === 'FAIL' && documentChecks.has(r.id))
  if (documentFailures.length > 0) {
    const mismatch = await documentMismatch(ctx)
    if (mismatch !== undefined) {
      needs.push(mismatch)
      for (const r of documentFailures) explained.add(r.id)
    }
  }

  // skipped for want of the token, not for the other nonce mode
  const tokenSkips = results.filter(r => r.result === 'SKIP' && tokenChecks.has(r.id) && ctx.controlToken === null && r.detail?.startsWith('needs --control-token') === true)
  if (tokenSkips.length > 0) {
    needs.push(
      `its control token, for the ${tokenSkips.length} skipped checks that issue and revoke capability tokens: pass it with --control-token T or GATE_CONTROL_TOKEN (or run gate-conformance --start-sidecar)`,
    )
  }
  const tokenFailures = results.filter(r => r.result === 'FAIL' && tokenChecks.has(r.id))
  if (tokenFailures.length > 0 && ctx.controlToken !== null) {
    const status = await controlTokenRefusal(ctx)
    if (status !== undefined) {
      needs.push(`the control token it was started with: its control routes answered ${status} to the one given (--control-token or GATE_CONTROL_TOKEN)`)
      for (const r of tokenFailures) explained.add(r.id)
    }
  }
  return { needs, results: results.map(r => (explained.has(r.id) ? { ...r, detail: `${r.detail ?? ''}${SEE_NEEDS}` } : r)) }
}

/** The words for a sidecar whose receipts carry another policy_hash than the document's, else undefined. */
async function documentMismatch(ctx: CheckContext): Promise<string | undefined> {
  let served: string
  try {
    served = (await ctx.samples()).allow.answer.receipt.policy_hash
  } catch {
    return undefined // no receipt to read it from: the failures say why
  }
  const { policy } = ctx
  const expected = sha256Hex(policy.bytes)
  if (served === expected) return undefined
  const start = policy.isDefault
    ? 'start it with the suite\'s document (gate-conformance --print-default-spec > pets.json, then gate sidecar --spec pets.json ...)'
    : `start it with --spec ${policy.source}`
  return (
    `the OpenAPI document the checks expect: its receipts carry policy_hash ${served}, not the SHA-256 of ${policy.source} (${expected}), ` +
    `so it probably loaded another document. ${start[0]!.toUpperCase()}${start.slice(1)}, pass the document it runs with --spec FILE, or run gate-conformance --start-sidecar`
  )
}

/** The status the control routes answer the given token with, when they refuse it (401/403). */
async function controlTokenRefusal(ctx: CheckContext): Promise<number | undefined> {
  try {
    // an empty body: a valid token gets 400 and nothing is issued
    const res = await ctx.http.send({
      method: 'POST',
      path: '/v1/capabilities/issue',
      headers: { authorization: `Bearer ${ctx.controlToken}`, 'content-type': 'application/json' },
      body: '{}',
    })
    return res.status === 401 || res.status === 403 ? res.status : undefined
  } catch {
    return undefined
  }
}
