// What an agent sends Gate in a tools/call's `_meta` (docs/mcp.md): the capability (`gateCapability`,
// which wins over the session's), an approved approval's id (`gateApprovalId`), a governed intent
// (`gateGovernedIntent`, whose `max_amount` is the declared cost) and model metadata (`gateModel`, or
// spec 03's hosted names `gateModelMetadata` and `modelMetadata`, first present wins in that order;
// recorded as asserted provenance). A signed approval token (`gateApprovalToken`) and an execution
// nonce (`gateExecutionNonce`) are not enforced on this path: the kernel denies them rather than
// ignore them. None of these reach the tool server.

export interface CallMeta {
  capabilityToken: string | undefined
  approvalId: string | undefined
  governedIntent: Record<string, unknown> | undefined
  modelMetadata: Record<string, unknown> | undefined
  unenforced: string[]
  progressToken: string | number | undefined
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Reads the Gate members of a request's `_meta`. A member of the wrong type fails closed: a non-string
 * capability or approval id is presented as empty text (which no guard accepts), a non-object intent
 * or model metadata is an authorization member the kernel denies.
 */
export function readCallMeta(meta: unknown): CallMeta {
  const m = isObject(meta) ? meta : {}
  const unenforced: string[] = []
  const text = (key: string): string | undefined => {
    const v = m[key]
    if (v === undefined) return undefined
    return typeof v === 'string' ? v : ''
  }
  const object = (key: string, member: string): Record<string, unknown> | undefined => {
    const v = m[key]
    if (v === undefined) return undefined
    if (isObject(v)) return v
    unenforced.push(member)
    return undefined
  }
  if (m.gateApprovalToken !== undefined) unenforced.push('approval_tokens')
  if (m.gateExecutionNonce !== undefined) unenforced.push('execution_nonce')
  const progressToken = typeof m.progressToken === 'string' || typeof m.progressToken === 'number' ? m.progressToken : undefined
  return {
    capabilityToken: text('gateCapability'),
    approvalId: text('gateApprovalId'),
    governedIntent: object('gateGovernedIntent', 'governed_intent'),
    modelMetadata: object(['gateModel', 'gateModelMetadata', 'modelMetadata'].find(key => m[key] !== undefined) ?? 'gateModel', 'model_metadata'),
    unenforced,
    progressToken,
  }
}
