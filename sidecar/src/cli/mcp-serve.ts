// `gate mcp serve`: Gate as the guard between an agent and its tools (docs/mcp.md). It speaks MCP to
// the agent over stdio and sits in front of either a wrapped MCP server it starts as a child
// (`-- COMMAND ARGS…`) or an OpenAPI API (`--spec FILE --upstream URL`). Every tools/call is decided
// by the kernel's tool-call path and recorded as a core receipt before the tool server sees it. It
// takes `gate sidecar`'s store and key flags (the durable-receipts gate included) and serves the Gate
// control routes (approvals, /v1) on --listen for approvers; stdout belongs to MCP, so every log line
// goes to stderr.
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { canonicalJson, sha256Hex, uuidv7 } from '@gate/sdk'
import { convertSpec, GENERATOR_DEFAULTS } from '@gate/openapi'
import { parseUpstreamUrl } from '@gate/proxy'
import { createMcpEdge, OpenApiToolServer, relayWrappedServer, serveStdio, StdioToolServer, type ToolServer } from '@gate/mcp'
import { ConfigError, isOpenApiError, UsageError } from '../errors.js'
import { GLOBAL_FLAGS_HELP } from '../config/global-flags.js'
import { policyFromBytes, type LoadedPolicy } from '../app/load-policy.js'
import { packageVersion, type RunningService } from '../app/create-service.js'
import { ToolCallKernel } from '../kernel/tool-call-kernel.js'
import { SERVICE_FLAG_OPTIONS, SERVICE_POLICY_FLAGS_HELP, startFromFlags } from './sidecar.js'
import { parseFlags, readSecondsFlag, runWithExitCodes } from './parse-flags.js'
import { lineLogger } from '../observability/logger.js'

export const MCP_SERVE_USAGE = `Usage: gate mcp serve [options] -- COMMAND [ARGS…]
       gate mcp serve --spec FILE --upstream URL [options]

Speaks MCP over stdio to an agent and decides every tools/call with the token's grants before the tool
server sees it; every decision is a signed receipt (gate.receipt.v1). Behind it: the MCP server started
as COMMAND ARGS… (a child over stdio; its resources, prompts, sampling, elicitation, logging and
progress pass through unchanged), or the OpenAPI API at --upstream, one tool per operation.

Options:
  --server-id ID              the server_id grants name (default "mcp" for a wrapped server, "${GENERATOR_DEFAULTS.serverId}"
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
  --listen ADDR               where the control routes (approvals, /v1) listen (default 127.0.0.1:0, a
                              free port, logged at start)
  --receipt-store PATH        SQLite receipt store; revocations, approvals, budgets, nonces and issued
                              capabilities live in sibling files (PATH.revocations.db, ...)
  --allow-ephemeral-receipts  keep receipts in memory only (lost on restart); local development only
${SERVICE_POLICY_FLAGS_HELP}

${GLOBAL_FLAGS_HELP}`

export const MCP_SERVE_FLAG_OPTIONS = {
  ...SERVICE_FLAG_OPTIONS,
  'server-id': { type: 'string' },
  upstream: { type: 'string' },
  'capability-file': { type: 'string' },
  'allow-tool': { type: 'string', multiple: true },
  'approval-tool': { type: 'string', multiple: true },
  'tool-timeout-secs': { type: 'string' },
} as const

const NAME = 'mcp serve'
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024
// the wrapped server's start (spawn, handshake, first tools/list): npx may download it first
const START_TIMEOUT_MS = 60_000

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes(NAME, MCP_SERVE_USAGE, async () => {
    const { values, positionals } = parseFlags(argv, MCP_SERVE_FLAG_OPTIONS, true)
    if (values.help === true) {
      process.stdout.write(MCP_SERVE_USAGE + '\n')
      return 0
    }
    const mode = readMode(values, positionals)
    const timeoutMs = readSecondsFlag(values['tool-timeout-secs'], '--tool-timeout-secs', 60) * 1000
    const allowTools = (values['allow-tool'] as string[] | undefined) ?? []
    const approvalTools = (values['approval-tool'] as string[] | undefined) ?? []
    const serverId = (values['server-id'] as string | undefined) ?? (mode.kind === 'openapi' ? GENERATOR_DEFAULTS.serverId : 'mcp')
    const sessionCapability = await readSessionCapability(values['capability-file'] as string | undefined)
    let conversion: ReturnType<typeof convertSpec> | undefined
    const service = await startFromFlags({ ...values, listen: values.listen ?? '127.0.0.1:0' }, NAME, {
      logToStderr: true,
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
    let toolServer: ToolServer
    let relay: StdioToolServer | undefined
    try {
      if (mode.kind === 'openapi') {
        toolServer = new OpenApiToolServer({ conversion: conversion!, upstream: mode.upstreamUrl, timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES })
      } else {
        relay = await StdioToolServer.start({ command: mode.command[0]!, args: mode.command.slice(1), timeoutMs, startTimeoutMs: Math.max(timeoutMs, START_TIMEOUT_MS), clientInfo: { name: 'gate', version }, log })
        toolServer = relay
      }
    } catch (err) {
      await service.close()
      throw err
    }
    const edge = createMcpEdge({
      serverId,
      toolServer,
      decider: new ToolCallKernel(service.kernel),
      sessionCapability,
      allowTools,
      approvalTools,
      controlUrl: service.url,
      sessionId: `mcp_${uuidv7()}`,
      serverInfo: { name: 'gate', version },
      relayedCapabilities: relay?.client.getServerCapabilities(),
      instructions: relay?.client.getInstructions(),
    })
    if (relay !== undefined) relayWrappedServer(edge, relay, timeoutMs, log)
    const { closed } = await serveStdio(edge, log)
    log(`serving MCP on stdio for ${mode.kind === 'openapi' ? `the OpenAPI API at ${mode.upstream}` : `the MCP server "${mode.command.join(' ')}"`} as server_id ${serverId}`)
    log(`session capability: ${sessionCapability === undefined ? 'none (per call only, _meta.gateCapability)' : 'set'}`)
    log(`control routes (approvals) on ${service.url}`)
    await Promise.race([closed, signalled()])
    await shutdown(service, toolServer, () => edge.close(), log)
    return 0
  })
}

type Mode = { kind: 'openapi'; spec: string; upstream: string; upstreamUrl: URL } | { kind: 'wrapped'; command: string[] }

function readMode(values: Record<string, unknown>, positionals: string[]): Mode {
  const spec = values.spec as string | undefined
  const upstream = values.upstream as string | undefined
  if (positionals.length > 0) {
    if (spec !== undefined || upstream !== undefined) throw new UsageError('give either -- COMMAND ARGS… or --spec FILE --upstream URL, not both')
    return { kind: 'wrapped', command: positionals }
  }
  if (spec === undefined || upstream === undefined) throw new UsageError('a tool server is required: -- COMMAND ARGS… (an MCP server over stdio), or --spec FILE with --upstream URL')
  return { kind: 'openapi', spec, upstream, upstreamUrl: new URL(parseUpstreamUrl(upstream).href) }
}

async function readSpec(path: string): Promise<Buffer> {
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


function signalled(): Promise<void> {
  return new Promise(resolve => {
    process.once('SIGTERM', () => resolve())
    process.once('SIGINT', () => resolve())
  })
}

// The agent hung up or a signal came: stop taking calls, stop the tool server, then flush the stores.
async function shutdown(service: RunningService, toolServer: ToolServer, closeEdge: () => Promise<void>, log: (line: string) => void): Promise<void> {
  await closeEdge().catch(() => {})
  await toolServer.close().catch(err => log(`stopping the tool server failed: ${(err as Error).message}`))
  await service.close().then(
    () => log('receipts flushed, stopped'),
    err => {
      log(`shutdown failed: ${(err as Error).message}`)
      process.exitCode = 1
    },
  )
}
