// The route table of spec 01 (proxy startup step 3): (method, path pattern) → default policy, plus
// what the guards need (sensitivity, approval, budget). Unpublished operations stay in the table:
// `x-gate-publish: false` hides a tool, never a route.
import { convertSpec, type SpecConversion } from './convert-spec.js'
import { createRouteTable, type RouteTable, type RouteTableOptions } from './match-route.js'
import type { RouteEntry } from './types.js'

/** Parses and converts a document (default generator configuration) into its route table. */
export function routeTableFromSpec(input: string, options: RouteTableOptions = {}): RouteTable {
  return buildRouteTable(convertSpec(input), options)
}

/** The route table of an already converted document, in path then method order. */
export function buildRouteTable(conversion: SpecConversion, options: RouteTableOptions = {}): RouteTable {
  return createRouteTable(conversion.operations.map(op => toRouteEntry(op, conversion)), options)
}

function toRouteEntry(op: SpecConversion['operations'][number], conversion: SpecConversion): RouteEntry {
  const entry: RouteEntry = {
    method: op.method,
    pattern: op.path,
    decision: op.policy.decision,
    why: op.policy.why,
    sensitivity: op.extensions.sensitivity,
    approvalRequired: op.extensions.approvalRequired,
    // Route rows report the document's own flag; the config only decides what the manifest lists.
    published: op.extensions.publish || !conversion.config.respectPublishFlag,
    toolName: op.tool.name,
  }
  if (op.operationId !== undefined) entry.operationId = op.operationId
  if (op.extensions.budgetLimit !== undefined) entry.budgetLimit = op.extensions.budgetLimit
  return entry
}
