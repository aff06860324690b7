// POST /v1/budgets/capture: a central budget capture for sidecars of a fleet (the kernel's capture plan,
// sdk planCaptures): every counter advanced and the cost added, or nothing (spec 03: quota sets covering
// a request are captured atomically), committed before the answer. Admin (service token) only.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { CapturePlan } from '@gate/sdk'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { TrustRequestError } from '../errors.js'
import type { BudgetCapturePort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { readJsonObject } from './json-body.js'

const KINDS = new Set(['grant', 'aggregate', 'family', 'share'])
const MAX_COUNTERS = 16

export function createBudgetCaptureRoute(deps: { auth: TrustAuthenticator; budgetCapture: BudgetCapturePort }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'budget capture')
      readQueryParameters(url, [])
      const plan = readPlan(await readJsonObject(req))
      sendJson(res, 200, await deps.budgetCapture.capture(plan))
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

function readPlan(body: Record<string, unknown>): CapturePlan {
  for (const key of Object.keys(body)) if (key !== 'invocations' && key !== 'cost') throw new TrustRequestError(`unknown member ${JSON.stringify(key)}`)
  const list = body.invocations
  if (!Array.isArray(list) || list.length > MAX_COUNTERS) throw new TrustRequestError(`invocations must be an array of at most ${MAX_COUNTERS} counters`)
  const invocations = list.map((value, i) => {
    const c = object(value, `invocations[${i}]`, ['owner', 'key', 'max', 'fixedMax', 'kind'])
    if (typeof c.fixedMax !== 'boolean') throw new TrustRequestError(`invocations[${i}].fixedMax must be a boolean`)
    if (typeof c.kind !== 'string' || !KINDS.has(c.kind)) throw new TrustRequestError(`invocations[${i}].kind must be grant, aggregate, family or share`)
    return { owner: text(c.owner, `invocations[${i}].owner`), key: text(c.key, `invocations[${i}].key`), max: units(c.max, `invocations[${i}].max`), fixedMax: c.fixedMax, kind: c.kind as 'grant' }
  })
  const plan: CapturePlan = { invocations }
  if (body.cost !== undefined) {
    const c = object(body.cost, 'cost', ['owner', 'key', 'units', 'currency', 'maxUnits'])
    if (typeof c.currency !== 'string' || !/^[A-Z]{3}$/.test(c.currency)) throw new TrustRequestError('cost.currency must be three uppercase ASCII letters')
    plan.cost = { owner: text(c.owner, 'cost.owner'), key: text(c.key, 'cost.key'), units: units(c.units, 'cost.units'), currency: c.currency, maxUnits: units(c.maxUnits, 'cost.maxUnits') }
  }
  if (plan.invocations.length === 0 && plan.cost === undefined) throw new TrustRequestError('a capture needs at least one counter or a cost')
  return plan
}

function object(value: unknown, at: string, keys: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TrustRequestError(`${at} must be an object`)
  for (const key of Object.keys(value)) if (!keys.includes(key)) throw new TrustRequestError(`${at} has an unknown member ${JSON.stringify(key)}`)
  return value as Record<string, unknown>
}

function text(value: unknown, at: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 512) throw new TrustRequestError(`${at} must be a non-empty string`)
  return value
}

function units(value: unknown, at: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new TrustRequestError(`${at} must be a non-negative integer`)
  return value as number
}
