// One core receipt in words, line for line as `gate receipt explain` words an HTTP receipt (the fields a
// core receipt carries; the HTTP status and caller hash live only in the HTTP form).

function verdictWords(decision) {
  if (decision === null || typeof decision !== 'object') return 'none (not a decision receipt)'
  switch (decision.verdict) {
    case 'allow':
      return 'allow: the request may proceed'
    case 'deny':
      return `deny by ${decision.guard}: ${decision.reason}`
    case 'cancelled':
      return `cancel: ${decision.reason} (evaluation cancelled; treated as denied)`
    case 'incomplete':
      return `incomplete: ${decision.reason} (evaluation did not finish; treated as denied)`
    default:
      return String(decision.verdict)
  }
}

function scopeWords(metadata) {
  const scope = metadata?.gate_http_status_scope
  if (scope === 'final') return `final receipt (records the status the client was answered with; finalizes decision ${metadata.gate_decision_receipt_id ?? '(unknown)'})`
  if (scope === 'decision') return 'decision receipt'
  return 'receipt'
}

/** ISO time of Unix seconds, UTC. */
export function isoTime(seconds) {
  return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') : String(seconds)
}

/** The receipt in words, one line per aspect. */
export function describeReceipt(r, verification) {
  const parameters = r.action?.parameters ?? {}
  const evidence = Array.isArray(r.evidence) ? r.evidence : []
  return [
    `receipt ${r.id}`,
    `  kind:        ${scopeWords(r.metadata)}, ${r.receipt_kind}/${r.boundary_class}/${r.trust_level}`,
    `  verdict:     ${verdictWords(r.decision)}`,
    `  route:       ${r.tool_name} (request ${parameters.request_id ?? 'unknown'})`,
    `  capability:  ${r.capability_id ? r.capability_id : 'none presented'}`,
    `  guards:      ${evidence.length === 0 ? 'no guard evidence recorded' : ''}`,
    ...evidence.map(e => `    - ${e.guard_name}: ${e.verdict ? 'passed' : 'failed'}${e.details ? `: ${e.details}` : ''}`),
    `  time:        ${isoTime(r.timestamp)}`,
    `  hashes:      content ${r.content_hash}, policy ${r.policy_hash}, parameters ${r.action?.parameter_hash ?? 'none'}`,
    `  signer:      ${r.kernel_key}`,
    `  signature:   ${verification.state === 'verified' ? 'verified' : verification.state === 'unchecked' ? 'not checked' : 'NOT VERIFIED'}: ${verification.detail}`,
  ].join('\n')
}

/** The short reason of a receipt for the list: the denying guard and reason, or the outcome. */
export function shortReason(r) {
  const d = r.decision
  if (d === null || typeof d !== 'object') return ''
  return d.verdict === 'allow' ? '' : `${d.guard ? `${d.guard}: ` : ''}${d.reason ?? ''}`
}
