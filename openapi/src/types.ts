// Types of the OpenAPI conversion (spec 01, "ToolDefinition (derived)", "Extension keys", "States and
// transitions"). Wire shapes (ToolDefinition, Manifest) stay snake_case; in-process shapes are camelCase.
import type { HttpMethod } from '@gate/sdk'

export type { HttpMethod }

/** The two default policies a route can have (spec 01, States and transitions). */
export type PolicyDecision = 'SessionAllow' | 'DenyByDefault'

/** Which classification step decided: approval flag, explicit side-effects flag, or the method. */
export type PolicyWhy = 'approval' | 'side_effects' | 'method'

/** `x-gate-sensitivity` values; `internal` when absent or unrecognized. */
export type Sensitivity = 'public' | 'internal' | 'sensitive' | 'restricted'

/** A JSON Schema as produced for a tool: a plain JSON object. */
export type JsonSchema = Record<string, unknown>

/** MCP-style behaviour hints of a tool (spec 01, ToolDefinition annotations). */
export interface ToolAnnotations {
  read_only: boolean
  destructive: boolean
  idempotent: boolean
  requires_approval: boolean
}

/** One tool per published HTTP operation; `pricing` and `estimated_duration_ms` are absent by spec. */
export interface ToolDefinition {
  name: string
  description: string
  input_schema: JsonSchema
  output_schema?: JsonSchema
  annotations: ToolAnnotations
}

/**
 * How a call of an operation's tool becomes its HTTP request: path and query parameters are taken from
 * the arguments by name, `body` becomes the request body sent as `body.mediaType`.
 */
export interface OperationCall {
  method: HttpMethod
  /** The OpenAPI path key, e.g. `/pets/{petId}`. */
  path: string
  /** The path and query parameters the input schema names, by location. */
  parameters: { name: string; in: 'path' | 'query' }[]
  /** Present when the operation takes a request body (the input schema then has `body`). */
  body?: { mediaType: string | undefined; required: boolean }
}

/** Body of a `gate.manifest.v1` document. */
export interface Manifest {
  schema: 'gate.manifest.v1'
  server_id: string
  name: string
  version: string
  protocol_version: '1.0'
  description?: string
  /** SHA-256 (hex) of the input document's UTF-8 bytes. */
  policy_hash: string
  tools: ToolDefinition[]
}

/**
 * The `x-gate-*` keys of one operation after type checks; a key of the wrong JSON type is absent.
 * `budgetLimit` is a bigint so the whole unsigned 64-bit range survives (2^64 - 1 is not a JS number).
 */
export interface GateExtensions {
  /** `x-gate-sensitivity`, default `internal`. */
  sensitivity: Sensitivity
  /** `x-gate-side-effects`; undefined when absent (the method decides). */
  sideEffects: boolean | undefined
  /** `x-gate-approval-required`, default false. */
  approvalRequired: boolean
  /** `x-gate-budget-limit`, minor currency units, 0 ≤ n ≤ 2^64 − 1; undefined when absent. */
  budgetLimit: bigint | undefined
  /** `x-gate-publish`, default true. */
  publish: boolean
}

/** The default policy of one operation and the classification step that produced it. */
export interface PolicyClassification {
  decision: PolicyDecision
  why: PolicyWhy
}

/** One row of the route table: an operation's (method, path pattern) and its policy. */
export interface RouteEntry {
  method: HttpMethod
  /** The OpenAPI path key, e.g. `/pets/{petId}`. */
  pattern: string
  operationId?: string
  decision: PolicyDecision
  why: PolicyWhy
  sensitivity: Sensitivity
  approvalRequired: boolean
  /** Unsigned 64-bit per-invocation cost cap, exact (bigint); absent when the operation sets none. */
  budgetLimit?: bigint
  /** False when `x-gate-publish: false` hid the operation from the manifest (still routable). */
  published: boolean
  /** The tool name (operationId, or `{METHOD} {path}`). */
  toolName: string
}

/** Why a request got the policy it got: a route's classification, or the fallback for unmatched paths. */
export type MatchWhy = PolicyWhy | 'ambiguous_path' | 'unmatched'

/**
 * A parsed document tree plus what JSON.parse / YAML alone would lose: the exact value of every
 * `x-gate-budget-limit` whose literal is not a safe JS integer, keyed by the object holding the key
 * (`null`: the literal is exactly known not to be an integer).
 */
export interface ParsedTree {
  root: unknown
  exactBudgets: WeakMap<object, bigint | null>
  /** Source text of a scalar at a key path (YAML only), for values YAML typed as numbers. */
  sourceOf?: (path: readonly string[]) => string | undefined
}

/** Result of matching one request against a route table. */
export type RouteMatch =
  | {
      matched: true
      /** The matched route's OpenAPI pattern (recorded as the receipt's `route_pattern`). */
      pattern: string
      route: RouteEntry
      decision: PolicyDecision
      why: PolicyWhy
      /** Path parameters by template name, percent-decoded. */
      params: Record<string, string>
    }
  | {
      matched: false
      /** The raw request path (query string removed), recorded as `route_pattern`. */
      pattern: string
      decision: PolicyDecision
      /**
       * `method` for the method rule; `ambiguous_path` when the path was refused as ambiguous;
       * `unmatched` when the table denies every path it does not document (`denyUnmatched`).
       */
      why: 'method' | 'ambiguous_path' | 'unmatched'
    }
