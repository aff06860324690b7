// The grants `gate capability issue` asks for, from its flags (docs/capabilities.md): `--grant "METHOD
// /route"` names an HTTP route (server_id "http"), `--tool SERVER:TOOL` a tool of a tool server (an MCP
// server, an OpenAPI API, the native wire's `--tool-server ID`). A tool names its server: a bare tool
// name is refused rather than given a server it might not mean. The portable constraint flags
// (spec 03: decided from call arguments) and --max-invocations apply to every grant of the token.
// A `--grant` that is a bare name ("read_text_file") is an operationId of server "http": issue 45 found
// one meant for an MCP server's tool, so it is said which server it is for; with `--spec FILE` every
// `--grant` must cover a route of that document.
import type { ToolGrant } from '@gate/sdk'
import { UsageError } from '../errors.js'
import { loadPolicyFile } from '../app/load-policy.js'
import { grantWarnings } from '../app/grant-warnings.js'

export const GRANT_FLAG_OPTIONS = {
  grant: { type: 'string', multiple: true },
  spec: { type: 'string' },
  tool: { type: 'string', multiple: true },
  'max-invocations': { type: 'string' },
  'path-prefix': { type: 'string' },
  domain: { type: 'string' },
  'domain-glob': { type: 'string' },
  'max-length': { type: 'string' },
  'max-args-size': { type: 'string' },
  custom: { type: 'string' },
  audience: { type: 'string', multiple: true },
  'memory-store': { type: 'string', multiple: true },
} as const

export const GRANT_FLAGS_HELP = `  --grant SPEC            an HTTP route the token may call: "METHOD /route", an operationId or a
                          wildcard (repeatable; server_id "http")
  --spec FILE             refuse a --grant that covers no route of this OpenAPI document
  --tool SERVER:TOOL      a tool of tool server SERVER (its server_id; TOOL may be "*"), repeatable
  --max-invocations N     cap on uses of each grant
Constraints on the call's arguments, added to every grant (docs/capabilities.md):
  --path-prefix PATH      every path argument under PATH (path_prefix)
  --domain HOST           every URL or domain argument is HOST (domain_exact)
  --domain-glob PATTERN   every URL or domain argument matches PATTERN, e.g. "*.example.com" (domain_glob)
  --max-length N          no string argument longer than N bytes (max_length)
  --max-args-size N       the arguments' canonical JSON at most N bytes (max_args_size)
  --custom KEY=VALUE      argument KEY equals VALUE (custom)
  --audience NAME         recipients only among these (audience_allowlist), repeatable
  --memory-store NAME     memory stores only among these (memory_store_allowlist), repeatable`

const SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

/** The grants the flags ask for; a UsageError names the flag that is wrong. */
export function readGrants(values: Record<string, unknown>): ToolGrant[] {
  const routes = (values.grant as string[] | undefined) ?? []
  const tools = (values.tool as string[] | undefined) ?? []
  if (routes.length + tools.length === 0) throw new UsageError('at least one --grant "METHOD /route" or --tool SERVER:TOOL is required')
  const max = readCount(values['max-invocations'], '--max-invocations')
  const constraints = readConstraints(values)
  const grant = (server_id: string, tool_name: string): ToolGrant => ({
    server_id,
    tool_name,
    ...(max === undefined ? {} : { max_invocations: max }),
    ...(constraints.length === 0 ? {} : { constraints }),
  })
  return [...routes.map(g => grant('http', g.trim())), ...tools.map(t => grant(...splitTool(t)))]
}

/**
 * With --spec FILE, refuses (UsageError) the HTTP grants that cover no route of the document; without
 * it, returns a note for each bare-name grant saying it is for server "http", not a tool server.
 */
export async function checkHttpGrants(values: Record<string, unknown>, grants: readonly ToolGrant[]): Promise<string[]> {
  const spec = values.spec as string | undefined
  if (spec !== undefined) {
    const { routeTable } = await loadPolicyFile(spec)
    const uncovered = grantWarnings({ grants: [...grants] }, routeTable)
    if (uncovered.length > 0) {
      const names = grants.filter(g => g.server_id === 'http' && uncovered.some(w => w.startsWith(`grant ${JSON.stringify(g.tool_name)} `)))
      throw new UsageError(
        `${names.map(g => `--grant ${JSON.stringify(g.tool_name)}`).join(', ')} ${names.length === 1 ? 'covers' : 'cover'} no route of ${spec} ` +
          `(its routes: gate check --spec ${spec}); a tool of an MCP or wire tool server is --tool SERVER:TOOL`,
      )
    }
    return []
  }
  return grants
    .filter(g => g.server_id === 'http' && /^[^\s/*]+$/.test(g.tool_name))
    .map(g => `--grant ${JSON.stringify(g.tool_name)} is for HTTP (server "http": the route whose operationId it is); a tool of an MCP or wire tool server is --tool SERVER:${g.tool_name}`)
}

function splitTool(value: string): [string, string] {
  const colon = value.indexOf(':')
  if (colon < 0) throw new UsageError(`--tool ${JSON.stringify(value)} names no tool server: write SERVER:TOOL (the server's server_id, e.g. fs:read_file)`)
  const server = value.slice(0, colon)
  const tool = value.slice(colon + 1)
  if (!SERVER_ID.test(server)) throw new UsageError(`--tool ${JSON.stringify(value)}: the server id must be letters, digits, "_", "." and "-"`)
  if (tool === '') throw new UsageError(`--tool ${JSON.stringify(value)} names no tool (use "*" for every tool of the server)`)
  return [server, tool]
}

function readConstraints(values: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  const text = (flag: string, type: string) => {
    const v = values[flag] as string | undefined
    if (v === undefined) return
    if (v === '') throw new UsageError(`--${flag} must not be empty`)
    out.push({ type, value: v })
  }
  text('path-prefix', 'path_prefix')
  text('domain', 'domain_exact')
  text('domain-glob', 'domain_glob')
  for (const [flag, type] of [['max-length', 'max_length'], ['max-args-size', 'max_args_size']] as const) {
    const n = readCount(values[flag], `--${flag}`)
    if (n !== undefined) out.push({ type, value: n })
  }
  const custom = values.custom as string | undefined
  if (custom !== undefined) {
    const eq = custom.indexOf('=')
    if (eq < 1) throw new UsageError(`--custom must be KEY=VALUE, got "${custom}"`)
    out.push({ type: 'custom', value: [custom.slice(0, eq), custom.slice(eq + 1)] })
  }
  for (const [flag, type] of [['audience', 'audience_allowlist'], ['memory-store', 'memory_store_allowlist']] as const) {
    const names = values[flag] as string[] | undefined
    if (names !== undefined) out.push({ type, value: names })
  }
  return out
}

function readCount(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new UsageError(`${flag} must be a non-negative integer, got "${String(value)}"`)
  return n
}
