// Budgets held across the fleet: the kernel's capture plan (max_invocations, aggregate and family
// budgets, budget shares, cost, and the same limits of every delegation link above the token) is
// captured at trust-control (POST /v1/budgets/capture), atomically and committed there before it
// answers. When trust-control cannot be reached or answers anything but a capture result, the capture
// is `unavailable`, and the budget guard denies the call: a budget another host may have spent cannot
// be known here (fail closed).
import type { CapturePlan } from '@gate/sdk'
import type { BudgetPort, CaptureResult, UnavailableCapture } from '../kernel/ports.js'
import type { ControlConnection } from './control-connection.js'

/** A capture waits this long for trust-control before the call is denied. */
const CAPTURE_TIMEOUT_MS = 5000

export function createRemoteBudgets(connection: ControlConnection): BudgetPort {
  return {
    async capture(plan: CapturePlan): Promise<CaptureResult | UnavailableCapture> {
      let answer: unknown
      try {
        answer = await connection.expectOk(connection.post('/v1/budgets/capture', JSON.stringify(plan), CAPTURE_TIMEOUT_MS))
      } catch (err) {
        return { allowed: false, failed: { kind: 'unavailable', reason: (err as Error).message } }
      }
      return readCaptureResult(answer) ?? { allowed: false, failed: { kind: 'unavailable', reason: `trust-control ${connection.origin} answered the capture with an unknown shape` } }
    },
  }
}

function readCaptureResult(value: unknown): CaptureResult | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const r = value as Record<string, unknown>
  const ints = (v: unknown): v is number[] => Array.isArray(v) && v.every(n => Number.isSafeInteger(n))
  if (r.allowed === true) return ints(r.used) && ints(r.costUnits) ? { allowed: true, used: r.used, costUnits: r.costUnits } : undefined
  if (r.allowed !== false || typeof r.failed !== 'object' || r.failed === null) return undefined
  const f = r.failed as Record<string, unknown>
  const int = (v: unknown) => Number.isSafeInteger(v)
  if (f.kind === 'invocation' && int(f.index) && int(f.used)) return { allowed: false, failed: { kind: 'invocation', index: f.index as number, used: f.used as number } }
  if (f.kind === 'max_mismatch' && int(f.index) && int(f.recordedMax)) return { allowed: false, failed: { kind: 'max_mismatch', index: f.index as number, recordedMax: f.recordedMax as number } }
  if (f.kind === 'cost' && int(f.index) && int(f.units)) return { allowed: false, failed: { kind: 'cost', index: f.index as number, units: f.units as number } }
  return undefined
}
