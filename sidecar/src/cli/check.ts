// `gate check --spec FILE [--json]`: converts one OpenAPI document the way the proxy and the tool
// bridge will, and shows the route table and the tools at a glance, or the conversion error and its kind.
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { isOpenApiError } from '../errors.js'
import { buildManifest } from '../openapi/manifest-from-spec.js'
import { buildRouteTable } from '../openapi/route-table.js'
import { convertSpec, type SpecConversion } from '../openapi/convert-spec.js'
import type { Manifest, RouteEntry, ToolDefinition } from '../openapi/types.js'
import { escapeControls, escapeLines } from './terminal-text.js'

const EXIT_OK = 0
const EXIT_INVALID = 1
const EXIT_USAGE = 2

export const USAGE = `Usage: gate check --spec FILE [--json]

Parse an OpenAPI 3.0/3.1 document (JSON or YAML) and print its route table and tools.

Options:
  --spec FILE   the OpenAPI document to check (required)
  --json        print {"routes", "tools", "manifest"} as JSON, or {"error": {"kind", "message"}};
                budget limits are decimal strings so no 64-bit value is rounded
  -h, --help    show this help

Route flags: approval (x-gate-approval-required), unpublished (x-gate-publish: false),
budget=N (x-gate-budget-limit, minor currency units).

Exit status: 0 the document converts, 1 it does not (or cannot be read), 2 usage error.
`

/** Runs `gate check`; returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  let values: { spec?: string; json?: boolean; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: { spec: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }))
  } catch (err) {
    process.stderr.write(`gate check: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`)
    return EXIT_USAGE
  }
  if (values.help === true) {
    process.stdout.write(USAGE)
    return EXIT_OK
  }
  if (values.spec === undefined || values.spec === '') {
    process.stderr.write(`gate check: --spec FILE is required\n\n${USAGE}`)
    return EXIT_USAGE
  }
  const json = values.json === true
  let input: string
  try {
    input = await readFile(values.spec, 'utf8')
  } catch (err) {
    // Not an OpenApiError kind: the proxy's name for an unreadable document is SpecLoad (spec 01).
    const message = `cannot read ${values.spec}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`
    return fail(json, 'SpecLoad', message)
  }
  let conversion: SpecConversion
  try {
    conversion = convertSpec(input)
  } catch (err) {
    if (isOpenApiError(err)) return fail(json, err.kind, err.message)
    throw err
  }
  const manifest = buildManifest(conversion)
  const routes = buildRouteTable(conversion).routes
  if (json) await writeJson(process.stdout, routes, manifest)
  else process.stdout.write(escapeLines(renderTables(conversion, routes, manifest.tools)))
  return EXIT_OK
}

function fail(json: boolean, kind: string, message: string): number {
  if (json) process.stdout.write(`${JSON.stringify({ error: { kind, message } }, null, 2)}\n`)
  else process.stderr.write(`gate check: ${escapeControls(message.startsWith(`${kind}:`) ? message : `${kind}: ${message}`)}\n`)
  return EXIT_INVALID
}

/** The JSON form of one route row: snake_case, budget as a decimal string. */
export function routeToJson(route: RouteEntry): Record<string, unknown> {
  return {
    method: route.method,
    pattern: route.pattern,
    ...(route.operationId === undefined ? {} : { operation_id: route.operationId }),
    decision: route.decision,
    why: route.why,
    sensitivity: route.sensitivity,
    approval_required: route.approvalRequired,
    ...(route.budgetLimit === undefined ? {} : { budget_limit: route.budgetLimit.toString() }),
    published: route.published,
    tool_name: route.toolName,
  }
}

// Written piece by piece: tools share schema objects in memory, but serialized they can run to
// hundreds of megabytes (Stripe's description gives ~430 MB), past what one JS string can hold. The
// bytes are those of JSON.stringify({ routes, tools, manifest }, null, 2).
async function writeJson(out: NodeJS.WritableStream, routes: readonly RouteEntry[], manifest: Manifest): Promise<void> {
  const write = async (chunk: string): Promise<void> => {
    if (!out.write(chunk)) await once(out, 'drain')
  }
  const writeArray = async (items: readonly unknown[], depth: number): Promise<void> => {
    if (items.length === 0) return write('[]')
    await write('[\n')
    for (let i = 0; i < items.length; i++) {
      await write(`${' '.repeat(depth + 2)}${indent(JSON.stringify(items[i], null, 2), depth + 2)}${i === items.length - 1 ? '\n' : ',\n'}`)
    }
    await write(`${' '.repeat(depth)}]`)
  }
  await write('{\n  "routes": ')
  await writeArray(routes.map(routeToJson), 2)
  await write(',\n  "tools": ')
  await writeArray(manifest.tools, 2)
  await write(',\n  "manifest": {\n')
  const { tools, ...header } = manifest
  for (const [key, value] of Object.entries(header)) await write(`    ${JSON.stringify(key)}: ${JSON.stringify(value)},\n`)
  await write('    "tools": ')
  await writeArray(tools, 4)
  await write('\n  }\n}\n')
}

function indent(text: string, depth: number): string {
  return text.replace(/\n/g, `\n${' '.repeat(depth)}`)
}

function renderTables(conversion: SpecConversion, routes: readonly RouteEntry[], tools: readonly ToolDefinition[]): string {
  const lines: string[] = []
  const hidden = routes.length - tools.length
  lines.push(
    `${conversion.title} ${conversion.version}: ${routes.length} route${routes.length === 1 ? '' : 's'}, ` +
      `${tools.length} tool${tools.length === 1 ? '' : 's'}${hidden > 0 ? ` (${hidden} unpublished)` : ''}`,
    `server_id ${conversion.config.serverId}, policy_hash ${conversion.policyHash}`,
    '',
  )
  lines.push(
    ...table(
      ['METHOD', 'PATTERN', 'DECISION', 'WHY', 'SENSITIVITY', 'FLAGS'],
      routes.map(r => [r.method, r.pattern, r.decision, r.why, r.sensitivity, routeFlags(r)]),
    ),
  )
  lines.push('')
  lines.push(
    ...table(
      ['TOOL', 'ANNOTATIONS', 'DESCRIPTION'],
      tools.map(t => [t.name, toolFlags(t), oneLine(t.description)]),
    ),
  )
  return `${lines.join('\n')}\n`
}

function routeFlags(route: RouteEntry): string {
  const flags: string[] = []
  if (route.approvalRequired) flags.push('approval')
  if (!route.published) flags.push('unpublished')
  if (route.budgetLimit !== undefined) flags.push(`budget=${route.budgetLimit}`)
  return flags.join(' ')
}

function toolFlags(tool: ToolDefinition): string {
  const a = tool.annotations
  const flags: string[] = []
  if (a.read_only) flags.push('read_only')
  if (a.destructive) flags.push('destructive')
  if (a.idempotent) flags.push('idempotent')
  if (a.requires_approval) flags.push('requires_approval')
  return flags.join(',')
}

const MAX_CELL = 60

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.min(MAX_CELL, Math.max(h.length, ...rows.map(r => r[i]!.length))))
  const render = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [render(header), ...rows.map(render)]
}
