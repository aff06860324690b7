// POST /v1/budgets/capture: a central budget capture for sidecars of a fleet (the kernel's capture plan,
// sdk planCaptures, with its delegation links' counters): every counter advanced and every cost added,
// or nothing (spec 03: quota sets covering a request are captured atomically), committed before the
// answer. Admin (service token) only.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { CaptureResult, CapturePlan } from '@gate/sdk'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { TrustRequestError } from '../errors.js'
import type { CaptureRequest } from '../fleet/fleet-messages.js'
import type { BudgetCapturePort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { readFleetRequest } from './json-body.js'

export function createBudgetCaptureRoute(deps: { auth: TrustAuthenticator; budgetCapture: BudgetCapturePort }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'budget capture')
      readQueryParameters(url, [])
      const plan = toPlan(await readFleetRequest(req, 'gate.fleet.capture_request.v1'))
      const answer: CaptureResult = await deps.budgetCapture.capture(plan)
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
