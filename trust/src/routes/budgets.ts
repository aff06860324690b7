// POST /v1/budgets/capture: a central budget capture for sidecars of a fleet (the kernel's capture plan,
// sdk planCaptures, with its delegation links' counters): every counter advanced and every cost added,
// or nothing (spec 03: quota sets covering a request are captured atomically), committed before the
// answer. Admin (service token) only.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { MAX_DELEGATION_DEPTH, type CapturePlan } from '@gate/sdk'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { TrustRequestError } from '../errors.js'
import type { BudgetCapturePort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { readJsonObject } from './json-body.js'

const KINDS = new Set(['grant', 'aggregate', 'family', 'share'])
// a token's own counters (grant, aggregate or family, share) and those of each delegation link (grant,
// aggregate, share): 3 + 3 × 4 at the deepest chain a verifier accepts
const MAX_COUNTERS = 16
// the token's own grant's and each link's
const MAX_COSTS = 1 + MAX_DELEGATION_DEPTH

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
  for (const key of Object.keys(body)) if (key !== 'invocations' && key !== 'costs') throw new TrustRequestError(`unknown member ${JSON.stringify(key)}`)
  const list = body.invocations
  if (!Array.isArray(list) || list.length > MAX_COUNTERS) throw new TrustRequestError(`invocations must be an array of at most ${MAX_COUNTERS} counters`)
  const invocations = list.map((value, i) => {
    const c = object(value, `invocations[${i}]`, ['owner', 'key', 'max', 'fixedMax', 'kind', 'link'])
    if (typeof c.fixedMax !== 'boolean') throw new TrustRequestError(`invocations[${i}].fixedMax must be a boolean`)
    if (typeof c.kind !== 'string' || !KINDS.has(c.kind)) throw new TrustRequestError(`invocations[${i}].kind must be grant, aggregate, family or share`)
    const counter: CapturePlan['invocations'][number] = { owner: text(c.owner, `invocations[${i}].owner`), key: text(c.key, `invocations[${i}].key`), max: units(c.max, `invocations[${i}].max`), fixedMax: c.fixedMax, kind: c.kind as 'grant' }
    if (c.link !== undefined) counter.link = linkIndex(c.link, `invocations[${i}].link`)
    return counter
  })
  const costList = body.costs ?? []
  if (!Array.isArray(costList) || costList.length > MAX_COSTS) throw new TrustRequestError(`costs must be an array of at most ${MAX_COSTS} cost totals`)
  const costs = costList.map((value, i) => {
    const c = object(value, `costs[${i}]`, ['owner', 'key', 'units', 'currency', 'maxUnits', 'link'])
    if (typeof c.currency !== 'string' || !/^[A-Z]{3}$/.test(c.currency)) throw new TrustRequestError(`costs[${i}].currency must be three uppercase ASCII letters`)
    const cost: CapturePlan['costs'][number] = { owner: text(c.owner, `costs[${i}].owner`), key: text(c.key, `costs[${i}].key`), units: units(c.units, `costs[${i}].units`), currency: c.currency, maxUnits: units(c.maxUnits, `costs[${i}].maxUnits`) }
    if (c.link !== undefined) cost.link = linkIndex(c.link, `costs[${i}].link`)
    return cost
  })
  if (invocations.length === 0 && costs.length === 0) throw new TrustRequestError('a capture needs at least one counter or a cost')
  // each counter is read once before any is advanced: one named twice would be counted twice
  unique(invocations.map(c => [c.owner, c.key]), 'invocations names a counter twice')
  unique(costs.map(c => [c.owner, c.key, c.currency]), 'costs names a cost total twice')
  return { invocations, costs }
}

function unique(keys: string[][], message: string): void {
  const seen = new Set(keys.map(k => JSON.stringify(k)))
  if (seen.size !== keys.length) throw new TrustRequestError(message)
}

function linkIndex(value: unknown, at: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) >= MAX_DELEGATION_DEPTH) throw new TrustRequestError(`${at} must be a delegation_chain index (0..${MAX_DELEGATION_DEPTH - 1})`)
  return value as number
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
