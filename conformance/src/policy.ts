// The policy expectations the verdict-matrix checks derive from the OpenAPI document the sidecar was
// started with (spec 01, States and transitions): one row per operation with its classification.
// Only what spec 01 reads is read here: paths, the seven methods, operationId and the x-gate keys.
import { readFile } from 'node:fs/promises'
import { SAFE_METHODS, type HttpMethod } from '@gate/sdk'
import { DEFAULT_SPEC_SOURCE, DEFAULT_SPEC_TEXT } from './default-spec.js'
import { UsageError } from './errors.js'

export type PolicyDecision = 'SessionAllow' | 'DenyByDefault'

/** One operation of the document and what spec 01 says about it. */
export interface PolicyRoute {
  method: HttpMethod
  pattern: string
  operationId: string | undefined
  decision: PolicyDecision
  approvalRequired: boolean
  /** The explicit `x-gate-side-effects` value, undefined when absent (or of the wrong type). */
  sideEffects: boolean | undefined
  /** `x-gate-sensitivity` (`internal` when absent or unrecognized). */
  sensitivity: 'public' | 'internal' | 'sensitive' | 'restricted'
}

const SENSITIVITIES = new Set(['public', 'internal', 'sensitive', 'restricted'])

/** The document the sidecar under test was started with. */
export interface PolicyDocument {
  /** A file path or the built-in document's name. */
  source: string
  isDefault: boolean
  /** The document bytes (policy_hash is their SHA-256 in Gate). */
  bytes: Uint8Array
  routes: readonly PolicyRoute[]
}

/** Methods read per path, in spec 01's order. */
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']

/** Segment value substituted for every `{param}` when a check needs a concrete path. */
export const PARAM_VALUE = 'conformance-1'

/** Loads `path`, or the built-in document when undefined. A bad document is a UsageError. */
export async function loadPolicyDocument(path: string | undefined): Promise<PolicyDocument> {
  if (path === undefined) {
    const bytes = new TextEncoder().encode(DEFAULT_SPEC_TEXT)
    return { source: DEFAULT_SPEC_SOURCE, isDefault: true, bytes, routes: routesFromDocument(JSON.parse(DEFAULT_SPEC_TEXT), DEFAULT_SPEC_SOURCE) }
  }
  let bytes: Uint8Array
  try {
    bytes = await readFile(path)
  } catch (err) {
    throw new UsageError(`--spec ${path}: cannot read the document (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, err)
  }
  const text = new TextDecoder().decode(bytes)
  return { source: path, isDefault: false, bytes, routes: routesFromDocument(await parseDocument(text, path), path) }
}

/** Parses JSON, or YAML when the `yaml` package can be loaded (spec 01: `{` first means JSON). */
async function parseDocument(text: string, source: string): Promise<unknown> {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text) as unknown
    } catch (err) {
      throw new UsageError(`--spec ${source}: not valid JSON (${(err as Error).message})`, err)
    }
  }
  let yaml: { parse(text: string): unknown }
  try {
    const name = 'yaml' // not a dependency of this package: loaded only when a YAML document is given
    yaml = (await import(name)) as { parse(text: string): unknown }
  } catch (err) {
    throw new UsageError(`--spec ${source}: a YAML document needs the "yaml" package installed beside @gate/conformance; or give the document as JSON`, err)
  }
  try {
    return yaml.parse(text)
  } catch (err) {
    throw new UsageError(`--spec ${source}: not valid YAML (${(err as Error).message})`, err)
  }
}

/** The operations of a parsed OpenAPI 3.x document, in path then method order. */
export function routesFromDocument(doc: unknown, source: string): PolicyRoute[] {
  const d = doc as { openapi?: unknown; paths?: unknown } | null
  if (typeof d !== 'object' || d === null || typeof d.openapi !== 'string' || !d.openapi.startsWith('3.')) {
    throw new UsageError(`--spec ${source}: not an OpenAPI 3.x document (top-level "openapi" must begin with "3.")`)
  }
  if (typeof d.paths !== 'object' || d.paths === null) throw new UsageError(`--spec ${source}: the document has no "paths" object`)
  const routes: PolicyRoute[] = []
  for (const pattern of Object.keys(d.paths).sort()) {
    const item = (d.paths as Record<string, unknown>)[pattern] as Record<string, unknown> | null
    if (typeof item !== 'object' || item === null) continue
    for (const method of METHODS) {
      const op = item[method.toLowerCase()] as Record<string, unknown> | undefined
      if (typeof op !== 'object' || op === null) continue
      const approvalRequired = op['x-gate-approval-required'] === true
      const sideEffects = typeof op['x-gate-side-effects'] === 'boolean' ? op['x-gate-side-effects'] : undefined
      const sensitivity = op['x-gate-sensitivity']
      routes.push({
        method,
        pattern,
        operationId: typeof op.operationId === 'string' ? op.operationId : undefined,
        decision: classify(method, approvalRequired, sideEffects),
        approvalRequired,
        sideEffects,
        sensitivity: typeof sensitivity === 'string' && SENSITIVITIES.has(sensitivity) ? (sensitivity as PolicyRoute['sensitivity']) : 'internal',
      })
    }
  }
  return routes
}

/** spec 01 classification order: approval, then explicit side effects, then the method. */
export function classify(method: HttpMethod, approvalRequired: boolean, sideEffects: boolean | undefined): PolicyDecision {
  if (approvalRequired) return 'DenyByDefault'
  if (sideEffects !== undefined) return sideEffects ? 'DenyByDefault' : 'SessionAllow'
  return SAFE_METHODS.has(method) ? 'SessionAllow' : 'DenyByDefault'
}

/** The pattern with every `{param}` segment replaced by PARAM_VALUE. */
export function concretePath(pattern: string): string {
  return pattern.replace(/\{[^{}/]+\}/g, PARAM_VALUE)
}

/** True when `pattern` matches `path` segment by segment (a `{param}` segment matches one segment). */
export function patternMatches(pattern: string, path: string): boolean {
  const p = pattern.split('/')
  const s = path.split('/')
  if (p.length !== s.length) return false
  return p.every((seg, i) => (/^\{[^{}]+\}$/.test(seg) ? s[i] !== '' : seg === s[i]))
}

/**
 * Other spellings of a concrete path that an upstream may route to the same place (Gate:
 * docs/security.md, route matching): a trailing slash, an encoded trailing slash, and, for two segments
 * or more, every separator encoded as `%2F` (servers that decode before routing), with and without an
 * encoded trailing slash. `/admin/export` gives `/admin/export/`, `/admin/export%2F`, `/admin%2Fexport`,
 * `/admin%2Fexport%2F` and `/admin%2fexport%2f`.
 */
export function slashVariants(path: string): string[] {
  const segments = path.split('/').slice(1)
  const variants = [`${path}/`, `${path}%2F`]
  if (segments.length >= 2) {
    const encoded = `/${segments.join('%2F')}`
    variants.push(encoded, `${encoded}%2F`, `/${segments.join('%2f')}%2f`)
  }
  return variants
}

/** A path under `prefix` that no route of the document matches, for any method. */
export function unmatchedPath(routes: readonly PolicyRoute[], suffix: string): string | undefined {
  for (const candidate of [`/gate-conformance-unmatched/${suffix}`, `/gate-conformance-unmatched-${suffix}`]) {
    if (!routes.some(r => patternMatches(r.pattern, candidate))) return candidate
  }
  return undefined
}
