// POST /v1/budgets/capture: a central budget capture for sidecars of a fleet (the kernel's capture plan,
// sdk planCaptures, with its delegation links' counters): every counter advanced and every cost added,
// or nothing (spec 03: quota sets covering a request are captured atomically), committed before the
// answer. Admin (service token) only.
//
// A capture names itself (`captureId`) and says how long its sender waits (`deadlineMs`): the store
// commits nothing after half of it, so an answer the sender no longer reads never counts (fault 1 of
// issue 41: a timed-out capture that committed later spent an invocation the caller was denied); the
// other half covers the way back. POST /v1/budgets/cancel gives back a capture whose answer was lost.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { CaptureResult, CapturePlan } from '@gate/sdk'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { TrustRequestError } from '../errors.js'
import type { CaptureCancelledMessage, CaptureRequest } from '../fleet/fleet-messages.js'
import type { BudgetCapturePort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { readFleetRequest } from './json-body.js'

/** A sender that names no deadline waits this long (the sidecar's capture timeout). */
const DEFAULT_CAPTURE_DEADLINE_MS = 5000

export function createBudgetCaptureRoute(deps: { auth: TrustAuthenticator; budgetCapture: BudgetCapturePort }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'budget capture')
      readQueryParameters(url, [])
      const request = await readFleetRequest(req, 'gate.fleet.capture_request.v1')
      const deadlineAt = performance.now() + (request.deadlineMs ?? DEFAULT_CAPTURE_DEADLINE_MS) / 2
      const answer: CaptureResult = await deps.budgetCapture.capture(toPlan(request), { captureId: request.captureId, deadlineAt })
      sendJson(res, 200, answer)
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

/** POST /v1/budgets/cancel: gives back the capture its sender gave up on, or makes sure it never counts. */
export function createBudgetCancelRoute(deps: { auth: TrustAuthenticator; budgetCapture: BudgetCapturePort }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'budget capture cancel')
      readQueryParameters(url, [])
      const { captureId } = await readFleetRequest(req, 'gate.fleet.capture_cancel.v1')
      const answer: CaptureCancelledMessage = await deps.budgetCapture.cancel(captureId)
      sendJson(res, 200, answer)
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

// The schema bounds the counters (16: a token's own three and three per delegation link of the
// deepest chain a verifier accepts), the cost totals (5: the grant's and one per link) and the link
// indexes; what it cannot say is checked here.
function toPlan(request: CaptureRequest): CapturePlan {
  const plan = { invocations: request.invocations, costs: request.costs ?? [] }
  if (plan.invocations.length === 0 && plan.costs.length === 0) throw new TrustRequestError('a capture needs at least one counter or a cost')
  // each counter is read once before any is advanced: one named twice would be counted twice
  unique(plan.invocations.map(c => [c.owner, c.key]), 'invocations names a counter twice')
  unique(plan.costs.map(c => [c.owner, c.key, c.currency]), 'costs names a cost total twice')
  return plan
}

function unique(keys: string[][], message: string): void {
  const seen = new Set(keys.map(k => JSON.stringify(k)))
  if (seen.size !== keys.length) throw new TrustRequestError(message)
}
