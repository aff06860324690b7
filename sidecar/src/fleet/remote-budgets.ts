// Budgets held across the fleet: the kernel's capture plan (max_invocations, aggregate and family
// budgets, budget shares, cost, and the same limits of every delegation link above the token) is
// captured at trust-control (POST /v1/budgets/capture), atomically and committed there before it
// answers. When trust-control cannot be reached or answers anything but a capture result (its schema,
// gate.fleet.capture_result.v1, is checked), the capture
// is `unavailable`, and the budget guard denies the call: a budget another host may have spent cannot
// be known here (fail closed).
import type { CaptureResult, CapturePlan } from '@gate/sdk'
import type { CaptureRequest } from '@gate/trust'
import type { BudgetPort, UnavailableCapture } from '../kernel/ports.js'
import type { ControlConnection } from './control-connection.js'

/** A capture waits this long for trust-control before the call is denied. */
const CAPTURE_TIMEOUT_MS = 5000

export function createRemoteBudgets(connection: ControlConnection): BudgetPort {
  return {
    async capture(plan: CapturePlan): Promise<CaptureResult | UnavailableCapture> {
      const request: CaptureRequest = plan
      try {
        // an answer that is not a gate.fleet.capture_result.v1 rejects too: the capture is unknown
        return await connection.expectMessage('gate.fleet.capture_result.v1', connection.post('/v1/budgets/capture', JSON.stringify(request), CAPTURE_TIMEOUT_MS))
      } catch (err) {
        return { allowed: false, failed: { kind: 'unavailable', reason: (err as Error).message } }
      }
    },
  }
}
