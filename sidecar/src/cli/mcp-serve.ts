// `gate mcp serve`: Gate as the guard between an agent and its tools (docs/mcp.md). It speaks MCP to
// the agent over stdio and sits in front of either a wrapped MCP server it starts as a child
// (`-- COMMAND ARGS…`) or an OpenAPI API (`--spec FILE --upstream URL`). Every tools/call is decided
// by the kernel's tool-call path and recorded as a core receipt before the tool server sees it. It
// takes `gate sidecar`'s store and key flags (the durable-receipts gate included) and serves the Gate
// control routes (approvals, /v1) on --listen for approvers; stdout belongs to MCP, so every log line
// goes to stderr. The tool-server and store options are shared with `gate mcp serve-http`
// (mcp-tool-server.ts). A wrapped server is started when the agent's initialize arrives, told the
// client capabilities the agent declared, and its whole session is relayed (passthrough.ts).
import { uuidv7 } from '@gate/sdk'
import { createMcpEdge, relayedClientCapabilities, relayWrappedServer, serveStdio, type EdgeBuilder, type StdioToolServer } from '@gate/mcp'
import { GLOBAL_FLAGS_HELP } from '../config/global-flags.js'
import { SERVICE_POLICY_FLAGS_HELP } from './sidecar.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { MCP_TOOL_SERVER_FLAG_OPTIONS, MCP_TOOL_SERVER_FLAGS_HELP, shutdownMcpToolService, signalled, startMcpToolService } from './mcp-tool-server.js'

export const MCP_SERVE_USAGE = `Usage: gate mcp serve [options] -- COMMAND [ARGS…]
       gate mcp serve --spec FILE --upstream URL [options]

Speaks MCP over stdio to an agent and decides every tools/call with the token's grants before the tool
server sees it; every decision is a signed receipt (gate.receipt.v1). Behind it: the MCP server started
as COMMAND ARGS… (a child over stdio; its resources, prompts, sampling, elicitation, logging and
progress are relayed), or the OpenAPI API at --upstream, one tool per operation. The MCP server is
started when the agent initializes, told the capabilities the agent declared.

Options:
${MCP_TOOL_SERVER_FLAGS_HELP}
  --listen ADDR               where the control routes (approvals, /v1) listen (default 127.0.0.1:0, a
                              free port, logged at start)
  --receipt-store PATH        SQLite receipt store; revocations, approvals, budgets, nonces and issued
                              capabilities live in sibling files (PATH.revocations.db, ...)
  --allow-ephemeral-receipts  keep receipts in memory only (lost on restart); local development only
${SERVICE_POLICY_FLAGS_HELP}

${GLOBAL_FLAGS_HELP}`

export const MCP_SERVE_FLAG_OPTIONS = MCP_TOOL_SERVER_FLAG_OPTIONS

const NAME = 'mcp serve'

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes(NAME, MCP_SERVE_USAGE, async () => {
    const { values, positionals } = parseFlags(argv, MCP_SERVE_FLAG_OPTIONS, true)
    if (values.help === true) {
      process.stdout.write(MCP_SERVE_USAGE + '\n')
      return 0
    }
    const tools = await startMcpToolService(values, positionals, NAME, (values.listen as string | undefined) ?? '127.0.0.1:0')
    const { log, sessionCapability, service } = tools
    const sessionId = `mcp_${uuidv7()}`
    let wrapped: StdioToolServer | undefined
    const build: EdgeBuilder = async initialize => {
      if (tools.startWrapped !== undefined) wrapped = await tools.startWrapped(relayedClientCapabilities(initialize.capabilities))
      // the session's lineage: its calls, their finals and the child receipts of relayed requests
      const chain = tools.decider.openChain()
      const edge = createMcpEdge({
        chain,
        serverId: tools.serverId,
        toolServer: wrapped ?? tools.api!,
        decider: tools.callDecider,
        tracer: tools.tracer,
        sessionCapability,
        allowTools: tools.allowTools,
        approvalTools: tools.approvalTools,
        controlUrl: service.url,
        sessionId,
        serverInfo: { name: 'gate', version: tools.version },
        relayedCapabilities: wrapped?.client.getServerCapabilities(),
        instructions: wrapped?.client.getInstructions(),
      })
      if (wrapped !== undefined) relayWrappedServer(edge, wrapped, { timeoutMs: tools.timeoutMs, log, serverId: tools.serverId, sessionId, recorder: tools.decider, chain })
      return edge
    }
    const stdio = await serveStdio(build, log)
    log(`serving MCP on stdio for ${tools.describe} as server_id ${tools.serverId}`)
    log(`session capability: ${sessionCapability === undefined ? 'none (per call only, _meta.gateCapability)' : 'set'}`)
    log(`control routes (approvals) on ${service.url}`)
    await Promise.race([stdio.closed, signalled()])
    await shutdownMcpToolService(tools, async () => {
      await stdio.server()?.close()
      await wrapped?.close()
    })
    // a wrapped server that could not start for the agent ends the command with an error (logged)
    if (stdio.failed()) return 1
    return 0
  })
}
