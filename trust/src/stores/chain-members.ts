// Finding the receipts of one chain (spec 03 Receipt DAG, docs/receipts.md) in either backend without an
// index of its own: a stored receipt is canonical JSON (RFC 8785), so a top-level `chainId` member is
// the exact text `"chainId":<JSON string>`, which the store searches for as a plain substring (instr,
// strpos: no wildcards); each hit is then parsed and kept only when the member is top-level.

/** The text a canonical receipt on `chainId` contains. */
export function chainMemberText(chainId: string): string {
  return `"chainId":${JSON.stringify(chainId)}`
}

/** True when `json` is a receipt whose own (top-level) `chainId` is `chainId`. */
export function isChainMember(json: string | null, chainId: string): boolean {
  if (json === null) return false
  try {
    const value = JSON.parse(json) as { chainId?: unknown }
    return typeof value === 'object' && value !== null && value.chainId === chainId
  } catch {
    return false
  }
}
