// Request → route matching for the kernel, called once per request: the route table's index
// (route-index.ts) searched with the request path as request-path.ts reads it, so that no request
// can borrow the policy of a route it does not reach (docs/kernel.md, docs/security.md):
//  - `HEAD` is decided as `GET` of the same path: servers (Express, Koa, Fastify, node:http apps)
//    answer HEAD with the GET handler, so a HEAD on a deny-by-default GET route must not ride the
//    method rule. An explicit HEAD operation decides instead when it is stricter.
//  - Letter case is ignored by default (`GET /REPORT` is `GET /report`), as Express and Koa route;
//    a table built case-sensitive compares literals exactly (RFC 3986, OpenAPI).
//  - Readings an upstream may apply beyond that (letter case in a case-sensitive table, `;` path
//    parameters, a decoded `%2F` as a separator, a trailing slash, a format suffix, and their
//    combinations: request-path.ts) never loosen a decision: when one of them reaches a stricter
//    route, that route decides (its policy, its pattern in the receipt); when one of them is
//    ambiguous, the request is DenyByDefault unless a stricter route already decides.
//  - An ambiguous path (request-path.ts) matches no route and is DenyByDefault whatever the method
//    (why `ambiguous_path`); an unmatched one gets the method rule, and a method outside
//    GET/HEAD/OPTIONS is DenyByDefault; a table built with `denyUnmatched` makes every unmatched
//    request DenyByDefault (why `unmatched`): the document is then the list of what is reachable.
import { classifyMethod } from './classify-policy.js'
import { AMBIGUOUS, normalizeRequestPath, otherReadings, stripQuery, type NormalizedPath } from './request-path.js'
import { RouteIndex, strictness } from './route-index.js'
import type { RouteEntry, RouteMatch } from './types.js'

export { RouteIndex }

/** Options of `createRouteTable`. */
export interface RouteTableOptions {
  /** Compare literal path segments with their letter case. Default false (Express and Koa ignore it). */
  caseSensitive?: boolean
  /** A request matching no operation is DenyByDefault whatever its method. Default false: the method rule. */
  denyUnmatched?: boolean
}

/** A route table: its rows in path then method order, and the indexes `matchRoute` searches. */
export interface RouteTable {
  readonly routes: readonly RouteEntry[]
  readonly caseSensitive: boolean
  /** Unmatched requests are DenyByDefault (why `unmatched`) instead of getting the method rule. */
  readonly denyUnmatched: boolean
  readonly index: RouteIndex
  /** A case-sensitive table's routes again, case-folded: what a case-insensitive upstream reaches. */
  readonly folded: RouteIndex | undefined
}

/** Builds a route table (and its indexes) from route rows. */
export function createRouteTable(routes: readonly RouteEntry[], options: RouteTableOptions = {}): RouteTable {
  const caseSensitive = options.caseSensitive === true
  const frozen = Object.freeze(routes.map(route => Object.freeze({ ...route })))
  return Object.freeze({
    routes: frozen,
    caseSensitive,
    denyUnmatched: options.denyUnmatched === true,
    index: new RouteIndex(frozen, caseSensitive),
    folded: caseSensitive ? new RouteIndex(frozen, false) : undefined,
  })
}

/**
 * Matches a request against the table. An unmatched path gets the method rule (DenyByDefault when the
 * table denies unmatched paths) and its raw path as `pattern`; an ambiguous path is DenyByDefault.
 */
export function matchRoute(table: RouteTable, method: string, path: string): RouteMatch {
  const raw = stripQuery(path)
  const normalized = normalizeRequestPath(raw)
  if (normalized === AMBIGUOUS) return ambiguous(raw)
  const methodRule: RouteMatch = table.denyUnmatched
    ? { matched: false, pattern: raw, decision: 'DenyByDefault', why: 'unmatched' }
    : { matched: false, pattern: raw, decision: classifyMethod(method), why: 'method' }
  if (normalized === null) return methodRule
  // the path as sent decides, exactly or, in a case-sensitive table, case-folded when nothing matches
  // exactly (the table's own routes stand; an unmatched path must not get the method rule when a
  // case-insensitive upstream would reach a stricter route)
  let best = findAsSent(table, method, normalized, methodRule) ?? methodRule
  // other readings an upstream may apply only ever make the decision stricter; stems come from the
  // case-folded index when there is one, so a case-sensitive table's stems are a superset
  const stemIndex = table.folded ?? table.index
  for (const reading of otherReadings(normalized, segment => stemIndex.suffixStems(segment))) {
    const found = reading === AMBIGUOUS ? ambiguous(raw) : findAsSent(table, method, reading, methodRule)
    if (found !== undefined && strictnessOf(found) > strictnessOf(best)) best = found
  }
  return best
}

function ambiguous(raw: string): RouteMatch {
  return { matched: false, pattern: raw, decision: 'DenyByDefault', why: 'ambiguous_path' }
}

// A case-folded match stands in for the method rule only when it is stricter than it.
function findAsSent(table: RouteTable, method: string, path: NormalizedPath, methodRule: RouteMatch): RouteMatch | undefined {
  const exact = find(table.index, method, path)
  if (exact !== undefined || table.folded === undefined) return exact
  const folded = find(table.folded, method, path)
  return folded !== undefined && strictnessOf(folded) > strictnessOf(methodRule) ? folded : undefined
}

// One index, one reading: HEAD as GET (or its own operation when stricter).
function find(index: RouteIndex, method: string, path: NormalizedPath): RouteMatch | undefined {
  const own = lookup(index, method, path)
  if (method !== 'HEAD') return own
  const asGet = lookup(index, 'GET', path)
  if (own === undefined) return asGet
  return asGet !== undefined && strictnessOf(asGet) > strictnessOf(own) ? asGet : own
}

function lookup(index: RouteIndex, method: string, path: NormalizedPath): RouteMatch | undefined {
  const route = index.find(method, path.segments, path.trailingSlash)
  if (route === undefined) return undefined
  const { entry } = route
  return { matched: true, pattern: entry.pattern, route: entry, decision: entry.decision, why: entry.why, params: index.params(route, path.segments) }
}

function strictnessOf(match: RouteMatch): number {
  return match.matched ? strictness(match.route) : match.decision === 'DenyByDefault' ? 1 : 0
}
