// Budgets held across the fleet: the kernel's capture plan (max_invocations, aggregate and family
// budgets, budget shares, cost, and the same limits of every delegation link above the token) is
// captured at trust-control (POST /v1/budgets/capture), atomically and committed there before it
// answers. When trust-control cannot be reached or answers anything but a capture result (its schema,
// gate.fleet.capture_result.v1, is checked), the capture is `unavailable`, and the budget guard denies
// the call: a budget another host may have spent cannot be known here (fail closed).
//
// A denied call must not spend anything (issue 41, fault 1). Each capture carries an id of its own and
// this sidecar's deadline: trust-control commits nothing past half of it, and when no answer arrives the
// capture is cancelled (POST /v1/budgets/cancel), which gives it back if it did commit and the answer was
// lost, or refuses it if it lands later.
import { randomUUID } from 'node:crypto'
import type { CaptureResult, CapturePlan } from '@gate/sdk'
import type { CaptureRequest } from '@gate/trust'
import type { BudgetPort, UnavailableCapture } from '../kernel/ports.js'
import type { ControlConnection } from './control-connection.js'

/** A capture waits this long for trust-control before the call is denied. */
const CAPTURE_TIMEOUT_MS = 5000

/** A cancel is tried this many times (it is idempotent), each with the capture's timeout. */
const CANCEL_ATTEMPTS = 3

export function createRemoteBudgets(connection: ControlConnection, log: (line: string) => void = () => undefined): BudgetPort {
  return {
    async capture(plan: CapturePlan): Promise<CaptureResult | UnavailableCapture> {
      const request: CaptureRequest = { ...plan, captureId: randomUUID(), deadlineMs: CAPTURE_TIMEOUT_MS }
      try {
        // an answer that is not a gate.fleet.capture_result.v1 rejects too: the capture is unknown
        return await connection.expectMessage('gate.fleet.capture_result.v1', connection.post('/v1/budgets/capture', JSON.stringify(request), CAPTURE_TIMEOUT_MS))
      } catch (err) {
        // the call is denied now; the cancel runs behind the answer
        void cancelCapture(connection, request.captureId as string, log)
        return { allowed: false, failed: { kind: 'unavailable', reason: (err as Error).message } }
      }
    },
  }
}

async function cancelCapture(connection: ControlConnection, captureId: string, log: (line: string) => void): Promise<void> {
  const body = JSON.stringify({ captureId })
  let problem = ''
  for (let attempt = 1; attempt <= CANCEL_ATTEMPTS; attempt++) {
    try {
      await connection.expectMessage('gate.fleet.capture_cancelled.v1', connection.post('/v1/budgets/cancel', body, CAPTURE_TIMEOUT_MS))
      return
    } catch (err) {
      problem = (err as Error).message
    }
  }
  // trust-control's deadline already kept a late capture from committing; only an answer lost after
  // commit stays counted
  log(`fleet: budget capture ${captureId} could not be cancelled: ${problem}`)
}
