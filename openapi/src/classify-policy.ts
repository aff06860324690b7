// Default policy classification (spec 01, States and transitions), in the spec's order:
// (1) x-gate-approval-required true → DenyByDefault; (2) else an explicit x-gate-side-effects decides;
// (3) else the method: GET, HEAD, OPTIONS → SessionAllow, anything else → DenyByDefault.
import { SAFE_METHODS } from '@gate/sdk'
import type { GateExtensions, PolicyClassification, PolicyDecision } from './types.js'

/** The default policy of one operation and which rule decided it. */
export function classifyPolicy(method: string, extensions: GateExtensions): PolicyClassification {
  if (extensions.approvalRequired) return { decision: 'DenyByDefault', why: 'approval' }
  if (extensions.sideEffects !== undefined) {
    return { decision: extensions.sideEffects ? 'DenyByDefault' : 'SessionAllow', why: 'side_effects' }
  }
  return { decision: classifyMethod(method), why: 'method' }
}

/** The method rule alone; an unknown method is DenyByDefault (fail closed). */
export function classifyMethod(method: string): PolicyDecision {
  return SAFE_METHODS.has(method) ? 'SessionAllow' : 'DenyByDefault'
}

/**
 * Whether the operation has side effects: the explicit flag, else the method. Approval does not
 * count: a GET that needs approval still reads only (annotations.read_only).
 */
export function hasSideEffects(method: string, extensions: GateExtensions): boolean {
  return extensions.sideEffects ?? !SAFE_METHODS.has(method)
}
