// What `gate mcp serve` (stdio) and `gate mcp serve-http` (the hosted edge) share: the tool-server
// choice (a wrapped MCP server `-- COMMAND ARGS…`, or `--spec FILE --upstream URL`), the store and key
// flags of `gate sidecar` (started here with the kernel and the control routes), the operator policy
// flags (--allow-tool, --approval-tool), the session capability, and the shutdown order. A wrapped
// server is started per agent session (`startWrapped`), told that agent's client capabilities; the
// command is checked once at start-up by starting it and stopping it again.
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { canonicalJson, sha256Hex } from '@gate/sdk'
import { convertSpec, GENERATOR_DEFAULTS } from '@gate/openapi'
import { parseUpstreamUrl } from '@gate/proxy'
import { OpenApiToolServer, StdioToolServer, type ToolServer } from '@gate/mcp'
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js'
import { ConfigError, isOpenApiError, UsageError } from '../errors.js'
import { policyFromBytes, type LoadedPolicy } from '../app/load-policy.js'
import { packageVersion, type RunningService } from '../app/create-service.js'
import { ToolCallKernel, type ToolCallDecision } from '../kernel/tool-call-kernel.js'
import { tracedDecider } from '../observability/traced-evaluator.js'
import type { Tracer } from '@opentelemetry/api'
import type { ToolCallDecider } from '@gate/mcp'
import { SERVICE_FLAG_OPTIONS, startFromFlags } from './sidecar.js'
import { readSessionLimits, SESSION_LIMIT_FLAG_OPTIONS, SESSION_LIMIT_FLAGS_HELP } from '../config/session-limit-flags.js'
import { readSecondsFlag } from './parse-flags.js'
import { lineLogger, type Logger } from '../observability/logger.js'

export const MCP_TOOL_SERVER_FLAGS_HELP = `  --server-id ID              the server_id grants name (default "mcp" for a wrapped server, "${GENERATOR_DEFAULTS.serverId}"
                              for an OpenAPI API)
  --spec FILE                 OpenAPI 3.x document (JSON or YAML) of the API at --upstream
  --upstream URL              the API's base URL, http or https; its path prefixes every operation path
  --capability-file PATH      the session's capability token (JSON or base64url); GATE_CAPABILITY works
                              too. A call's own _meta.gateCapability wins over it
  --allow-tool NAME           a wrapped server's tool that runs without a token (repeatable; every other
                              tool of a wrapped server needs a grant)
  --approval-tool NAME        a tool whose every call waits for an approver (repeatable)
  --tool-timeout-secs N       ceiling of one tool call (default 60); a wrapped server gets at least
                              60 s to start
${SESSION_LIMIT_FLAGS_HELP}`

export const MCP_TOOL_SERVER_FLAG_OPTIONS = {
  ...SERVICE_FLAG_OPTIONS,
  'server-id': { type: 'string' },
  upstream: { type: 'string' },
  'capability-file': { type: 'string' },
  'allow-tool': { type: 'string', multiple: true },
  'approval-tool': { type: 'string', multiple: true },
  'tool-timeout-secs': { type: 'string' },
  ...SESSION_LIMIT_FLAG_OPTIONS,
} as const

const MAX_RESPONSE_BYTES = 16 * 1024 * 1024
// the wrapped server's start (spawn, handshake, first tools/list): npx may download it first
const START_TIMEOUT_MS = 60_000

export type ToolServerMode = { kind: 'openapi'; spec: string; upstream: string; upstreamUrl: URL } | { kind: 'wrapped'; command: string[] }

/** A started tool server with the service whose kernel decides its calls. */
export interface McpToolService {
  service: RunningService & { logger: Logger }
  log: (line: string) => void
  version: string
  mode: ToolServerMode
  serverId: string
  /** An OpenAPI API's tool server, one for every session; undefined for a wrapped server. */
  api: ToolServer | undefined
  /**
   * Starts a connection (a child process) to the wrapped server declaring `clientCapabilities`;
   * undefined for an OpenAPI API. The caller closes it.
   */
  startWrapped: ((clientCapabilities: ClientCapabilities) => Promise<StdioToolServer>) | undefined
  decider: ToolCallKernel
  /** What the edges decide calls with: the kernel, in spans when tracing is on. */
  callDecider: ToolCallDecider<ToolCallDecision>
  /** Set when tracing is on, for the edges' tools/call spans. */
  tracer: Tracer | undefined
  sessionCapability: string | undefined
  allowTools: string[]
  approvalTools: string[]
  timeoutMs: number
  /** Where the tool server is, for the start-up line. */
  describe: string
}

/**
 * Reads the tool-server flags, starts the service (stores, kernel, control routes on `controlListen`)
 * and then the tool server. A tool server that cannot start closes the service again.
 */
export async function startMcpToolService(values: Record<string, unknown>, positionals: string[], name: string, controlListen: string): Promise<McpToolService> {
  const mode = readMode(values, positionals)
  const timeoutMs = readSecondsFlag(values['tool-timeout-secs'], '--tool-timeout-secs', 60) * 1000
  const allowTools = (values['allow-tool'] as string[] | undefined) ?? []
  const approvalTools = (values['approval-tool'] as string[] | undefined) ?? []
  const serverId = (values['server-id'] as string | undefined) ?? (mode.kind === 'openapi' ? GENERATOR_DEFAULTS.serverId : 'mcp')
  const sessionCapability = await readSessionCapability(values['capability-file'] as string | undefined)
  let conversion: ReturnType<typeof convertSpec> | undefined
  const service = await startFromFlags({ ...values, listen: controlListen }, name, {
    logToStderr: true,
    sessionLimits: readSessionLimits(values),
    policyLoader: async (routeOptions): Promise<LoadedPolicy> => {
      if (mode.kind === 'openapi') {
        const bytes = await readSpec(mode.spec)
        try {
          conversion = convertSpec(bytes.toString('utf8'), { serverId })
          return policyFromBytes(bytes, mode.spec, routeOptions)
        } catch (err) {
          if (isOpenApiError(err)) throw new ConfigError(`${mode.spec}: ${err.message}`, err)
          throw err
        }
      }
      // a wrapped server's policy is the operator's configuration: its hash is what receipts name
      const config = { server_id: serverId, command: mode.command, allow_tools: allowTools, approval_tools: approvalTools }
      return { routeTable: null, policyHash: sha256Hex(canonicalJson(config)), routeCount: 0, source: `wrapped MCP server ${basename(mode.command[0]!)} (--allow-tool, --approval-tool)` }
    },
  })
  const log = lineLogger(service.logger)
  const version = await packageVersion()
  const api = mode.kind === 'openapi' ? new OpenApiToolServer({ conversion: conversion!, upstream: mode.upstreamUrl, timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES }) : undefined
  const startWrapped =
    mode.kind === 'openapi'
      ? undefined
      : (clientCapabilities: ClientCapabilities) =>
          StdioToolServer.start({ command: mode.command[0]!, args: mode.command.slice(1), timeoutMs, startTimeoutMs: Math.max(timeoutMs, START_TIMEOUT_MS), clientInfo: { name: 'gate', version }, clientCapabilities, log })
  const describe = mode.kind === 'openapi' ? `the OpenAPI API at ${mode.upstream}` : `the MCP server "${mode.command.join(' ')}"`
  const decider = new ToolCallKernel(service.kernel, service.listedReceipts)
  const { tracer } = service
  const callDecider = tracer === undefined ? decider : tracedDecider(decider, tracer)
  return { service, log, version, mode, serverId, api, startWrapped, decider, callDecider, tracer, sessionCapability, allowTools, approvalTools, timeoutMs, describe }
}

/** Starts the wrapped server once and stops it: a command that cannot start fails the start-up, not a session. */
export async function checkWrappedServer(tools: McpToolService): Promise<void> {
  if (tools.startWrapped === undefined) return
  try {
    const probe = await tools.startWrapped({})
    await probe.close()
  } catch (err) {
    await tools.service.close()
    throw err
  }
}

function readMode(values: Record<string, unknown>, positionals: string[]): ToolServerMode {
  const spec = values.spec as string | undefined
  const upstream = values.upstream as string | undefined
  if (positionals.length > 0) {
    if (spec !== undefined || upstream !== undefined) throw new UsageError('give either -- COMMAND ARGS… or --spec FILE --upstream URL, not both')
    return { kind: 'wrapped', command: positionals }
  }
  if (spec === undefined || upstream === undefined) throw new UsageError('a tool server is required: -- COMMAND ARGS… (an MCP server over stdio), or --spec FILE with --upstream URL')
  return { kind: 'openapi', spec, upstream, upstreamUrl: new URL(parseUpstreamUrl(upstream).href) }
}

/** The bytes of --spec (exit 1 naming the file when it cannot be read). */
export async function readSpec(path: string): Promise<Buffer> {
  try {
    return await readFile(path)
  } catch (err) {
    throw new ConfigError(`cannot read --spec ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
}

// From a file or the environment, never argv: other local users can read a process's arguments.
async function readSessionCapability(path: string | undefined): Promise<string | undefined> {
  if (path !== undefined) {
    try {
      return (await readFile(path, 'utf8')).trim()
    } catch (err) {
      throw new ConfigError(`cannot read --capability-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
    }
  }
  const env = process.env.GATE_CAPABILITY
  return env === undefined || env.trim() === '' ? undefined : env.trim()
}

export function signalled(): Promise<void> {
  return new Promise(resolve => {
    process.once('SIGTERM', () => resolve())
    process.once('SIGINT', () => resolve())
  })
}

// The agent hung up or a signal came: stop taking calls, stop the tool server, then flush the stores.
export async function shutdownMcpToolService(tools: McpToolService, closeEdge: () => Promise<void>): Promise<void> {
  const { log } = tools
  await closeEdge().catch(() => {})
  await tools.api?.close().catch(err => log(`stopping the tool server failed: ${(err as Error).message}`))
  await tools.service.close().then(
    () => log('receipts flushed, stopped'),
    err => {
      log(`shutdown failed: ${(err as Error).message}`)
      process.exitCode = 1
    },
  )
}
