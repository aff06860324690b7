// Format detection, parsing and the top-level rules of spec 01 ("Input document rules"): JSON when the
// first non-whitespace character is `{`, YAML otherwise; `openapi` must begin with `3.`; `openapi`,
// `info` and `paths` are required, checked in that order.
import { InvalidConfigError } from '@gate/sdk'
import { OpenApiError } from './errors.js'
import { isPlainObject } from './is-plain-object.js'
import { parseJsonText } from './parse-json.js'
import { parseYamlText } from './parse-yaml.js'

export const DEFAULT_TITLE = 'Untitled API'
export const DEFAULT_VERSION = '0.0.0'

/** A parsed OpenAPI 3.x document with its `info` defaults applied. */
export interface OpenApiDocument {
  root: Record<string, unknown>
  /** The `openapi` field, e.g. `3.1.0`. */
  openapi: string
  format: 'json' | 'yaml'
  title: string
  version: string
  description: string | undefined
  paths: Record<string, unknown>
  /** Exact `x-gate-budget-limit` values the plain parse would round, by holder object. */
  exactBudgets: WeakMap<object, bigint | null>
}

/** Parses an OpenAPI 3.0/3.1 document from JSON or YAML text and checks its required fields. */
export function parseDocument(input: string): OpenApiDocument {
  if (typeof input !== 'string') throw new InvalidConfigError('input', 'a string holding a JSON or YAML document', input)
  // trimStart's whitespace includes the byte order mark, so a BOM-prefixed JSON file is still JSON.
  const format = input.trimStart().startsWith('{') ? 'json' : 'yaml'
  const tree = format === 'json' ? parseJsonText(input) : parseYamlText(input)
  const root = tree.root
  if (!isPlainObject(root)) {
    throw new OpenApiError('InvalidSpec', 'document', `the document root must be an object, got ${kindOf(root)}`)
  }
  const openapi = root.openapi
  if (openapi === undefined) {
    // Swagger 2.0 has no `openapi` field: by the spec's table that is MissingField(openapi).
    const swagger = root.swagger
    const hint = swagger === undefined ? undefined : `found swagger ${JSON.stringify(swagger)}; Swagger 2.0 is unsupported`
    throw new OpenApiError('MissingField', 'openapi', hint)
  }
  if (typeof openapi !== 'string' || !openapi.startsWith('3.')) {
    const got = typeof openapi === 'string' ? JSON.stringify(openapi) : `${kindOf(openapi)} ${String(openapi)}`
    throw new OpenApiError('UnsupportedVersion', 'openapi', `must be a string beginning with "3.", got ${got}`)
  }
  const info = root.info
  if (info === undefined) throw new OpenApiError('MissingField', 'info')
  if (!isPlainObject(info)) throw new OpenApiError('InvalidSpec', 'info', `must be an object, got ${kindOf(info)}`)
  const paths = root.paths
  if (paths === undefined) throw new OpenApiError('MissingField', 'paths')
  if (!isPlainObject(paths)) throw new OpenApiError('InvalidSpec', 'paths', `must be an object, got ${kindOf(paths)}`)
  return {
    root,
    openapi,
    format,
    title: nonEmptyString(info.title) ?? DEFAULT_TITLE,
    version: readVersion(info.version, tree.sourceOf) ?? DEFAULT_VERSION,
    description: nonEmptyString(info.description),
    paths,
    exactBudgets: tree.exactBudgets,
  }
}

// `version: 1.0` in YAML is the number 1; its source text keeps the author's "1.0".
function readVersion(value: unknown, sourceOf: ((path: readonly string[]) => string | undefined) | undefined): string | undefined {
  if (typeof value === 'number') return sourceOf?.(['info', 'version']) ?? String(value)
  return nonEmptyString(value)
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}

/** Names a JSON value's type for messages. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  return `a ${typeof value}`
}
