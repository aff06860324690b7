// What `gate run` and `gate wire serve` share (docs/wire.md): the tool servers (`--tool-server
// ID=COMMAND`, repeatable, each a stdio MCP server; `--spec FILE --upstream URL`, an OpenAPI API), the
// store, key and fleet flags of `gate sidecar` (the service, its kernel and its control routes on
// --control-listen, started here), and the wire endpoint on the kernel's tool-call path. The policy
// hash of every receipt is the hash of that tool-server configuration.
import { canonicalJson, sha256Hex } from '@gate/sdk'
import { convertSpec, GENERATOR_DEFAULTS } from '@gate/openapi'
import { parseUpstreamUrl } from '@gate/proxy'
import { OpenApiToolServer, StdioToolServer, type ToolServer } from '@gate/mcp'
import { splitShellWords, ToolServerSet, WireEndpoint } from '@gate/wire'
import { ConfigError, isOpenApiError, UsageError } from '../errors.js'
import { packageVersion, type RunningService } from '../app/create-service.js'
import { wireRevocationEvents } from '../app/wire-revocations.js'
import { ToolCallKernel } from '../kernel/tool-call-kernel.js'
import { lineLogger, type Logger } from '../observability/logger.js'
import { SERVICE_FLAG_OPTIONS, startFromFlags } from './sidecar.js'
import { readSessionLimits, SESSION_LIMIT_FLAG_OPTIONS, SESSION_LIMIT_FLAGS_HELP } from '../config/session-limit-flags.js'
import { readSecondsFlag } from './parse-flags.js'
import { readSpec } from './mcp-tool-server.js'

export const WIRE_TOOL_FLAGS_HELP = `  --tool-server ID=COMMAND    a stdio MCP server whose tools are server_id ID; COMMAND is split into
                              words as a shell would (quotes, backslashes; nothing expanded). Repeatable
  --spec FILE                 OpenAPI 3.x document (JSON or YAML) of the API at --upstream, one tool per
                              operation
  --upstream URL              the API's base URL, http or https
  --server-id ID              the API's server_id (default "${GENERATOR_DEFAULTS.serverId}")
  --tool-timeout-secs N       ceiling of one tool call (default 60); a wrapped server gets at least 60 s
                              to start
  --control-listen ADDR       where the control routes (approvals, /v1 issuing and revocation) listen
                              (default 127.0.0.1:0, a free port, logged at start)
${SESSION_LIMIT_FLAGS_HELP}`

export const WIRE_SERVICE_FLAG_OPTIONS = {
  ...SERVICE_FLAG_OPTIONS,
  'tool-server': { type: 'string', multiple: true },
  upstream: { type: 'string' },
  'server-id': { type: 'string' },
  'tool-timeout-secs': { type: 'string' },
  'control-listen': { type: 'string' },
  ...SESSION_LIMIT_FLAG_OPTIONS,
} as const

const MAX_RESPONSE_BYTES = 16 * 1024 * 1024
const START_TIMEOUT_MS = 60_000
const SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

type ToolServerSpec = { kind: 'wrapped'; serverId: string; command: string[] } | { kind: 'openapi'; serverId: string; spec: string; upstream: string; upstreamUrl: URL }

/** A started service with its tool servers and the wire endpoint on its kernel. */
export interface WireService {
  service: RunningService & { logger: Logger }
  endpoint: WireEndpoint
  toolServers: ToolServerSet
  log: (line: string) => void
  /** The tool servers, for the start-up line. */
  describe: string
  /** Cancels the calls in flight (answering each with `reason`), stops the tool servers, flushes the stores. */
  close(reason: string): Promise<void>
}

/** Reads the tool-server flags, starts the service (stores, kernel, control routes) and every tool server. */
export async function startWireService(values: Record<string, unknown>, name: string): Promise<WireService> {
  const specs = readToolServers(values)
  const timeoutMs = readSecondsFlag(values['tool-timeout-secs'], '--tool-timeout-secs', 60) * 1000
  const documents = new Map<string, Buffer>()
  for (const spec of specs) if (spec.kind === 'openapi') documents.set(spec.serverId, await readSpec(spec.spec))
  const service = await startFromFlags({ ...values, spec: undefined, listen: (values['control-listen'] as string | undefined) ?? '127.0.0.1:0' }, name, {
    logToStderr: true,
    sessionLimits: readSessionLimits(values),
    // the operator's tool-server configuration is the policy receipts name
    policyLoader: async () => ({ routeTable: null, policyHash: sha256Hex(canonicalJson(policyConfig(specs, documents))), routeCount: 0, source: 'tool servers (--tool-server, --spec)' }),
  })
  const log = lineLogger(service.logger)
  const version = await packageVersion()
  const started: [string, ToolServer][] = []
  try {
    for (const spec of specs) {
      if (spec.kind === 'wrapped') {
        const [command, ...args] = spec.command
        started.push([spec.serverId, await StdioToolServer.start({ command: command!, args, timeoutMs, startTimeoutMs: Math.max(timeoutMs, START_TIMEOUT_MS), clientInfo: { name: 'gate', version }, log })])
      } else {
        const conversion = convertDocument(spec, documents.get(spec.serverId)!)
        started.push([spec.serverId, new OpenApiToolServer({ conversion, upstream: spec.upstreamUrl, timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES })])
      }
    }
  } catch (err) {
    await Promise.all(started.map(([, s]) => s.close().catch(() => {})))
    await service.close()
    throw err
  }
  const toolServers = new ToolServerSet(started)
  const endpoint = new WireEndpoint({
    decider: new ToolCallKernel(service.kernel),
    toolServers,
    revocations: wireRevocationEvents(service.kernel.ports.revocations, log),
    controlUrl: service.url,
    log,
  })
  const describe = specs.map(s => (s.kind === 'wrapped' ? `${s.serverId} (MCP server "${s.command.join(' ')}")` : `${s.serverId} (the OpenAPI API at ${s.upstream})`)).join(', ')
  return {
    service,
    endpoint,
    toolServers,
    log,
    describe,
    async close(reason) {
      await endpoint.close(reason)
      await toolServers.close(log)
      await service.close().then(
        () => log('receipts flushed, stopped'),
        err => {
          log(`shutdown failed: ${(err as Error).message}`)
          process.exitCode = 1
        },
      )
    },
  }
}

function readToolServers(values: Record<string, unknown>): ToolServerSpec[] {
  const specs: ToolServerSpec[] = []
  for (const flag of (values['tool-server'] as string[] | undefined) ?? []) {
    const eq = flag.indexOf('=')
    const serverId = eq < 0 ? '' : flag.slice(0, eq)
    if (!SERVER_ID.test(serverId)) throw new UsageError(`--tool-server must be ID=COMMAND with an ID of letters, digits, "_", "." and "-", got "${flag}"`)
    const command = splitShellWords(flag.slice(eq + 1))
    if (command.length === 0) throw new UsageError(`--tool-server ${serverId}= names no command`)
    specs.push({ kind: 'wrapped', serverId, command })
  }
  const spec = values.spec as string | undefined
  const upstream = values.upstream as string | undefined
  if ((spec === undefined) !== (upstream === undefined)) throw new UsageError('--spec FILE and --upstream URL go together')
  if (spec !== undefined && upstream !== undefined) {
    specs.push({ kind: 'openapi', serverId: (values['server-id'] as string | undefined) ?? GENERATOR_DEFAULTS.serverId, spec, upstream, upstreamUrl: new URL(parseUpstreamUrl(upstream).href) })
  } else if (values['server-id'] !== undefined) throw new UsageError('--server-id names the OpenAPI API of --spec; a --tool-server names its own ID')
  if (specs.length === 0) throw new UsageError('a tool server is required: --tool-server ID=COMMAND (an MCP server over stdio), or --spec FILE with --upstream URL')
  const ids = specs.map(s => s.serverId)
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i)
  if (repeated !== undefined) throw new UsageError(`two tool servers are named "${repeated}"; every server_id must be unique`)
  return specs
}

function policyConfig(specs: readonly ToolServerSpec[], documents: ReadonlyMap<string, Buffer>) {
  return {
    tool_servers: specs.map(s =>
      s.kind === 'wrapped' ? { server_id: s.serverId, command: s.command } : { server_id: s.serverId, upstream: s.upstream, spec_sha256: sha256Hex(documents.get(s.serverId)!) },
    ),
  }
}

function convertDocument(spec: Extract<ToolServerSpec, { kind: 'openapi' }>, bytes: Buffer) {
  try {
    return convertSpec(bytes.toString('utf8'), { serverId: spec.serverId })
  } catch (err) {
    if (isOpenApiError(err)) throw new ConfigError(`${spec.spec}: ${err.message}`, err)
    throw err
  }
}
