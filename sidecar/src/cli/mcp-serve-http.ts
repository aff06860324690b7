// `gate mcp serve-http`: the hosted MCP edge (spec 03, "Hosted session transport"; docs/mcp.md). The
// same tool servers, stores, keys and policy flags as `gate mcp serve` (mcp-tool-server.ts), served to
// remote agents over Streamable HTTP on --listen: POST, GET and DELETE /mcp, one session per
// initialize, each session its own MCP edge and, for a wrapped MCP server, its own connection to it (a
// child process told that session's client capabilities; --shared-server: one for all). Sessions and their replay
// windows live in the edge-session store beside the receipt store, so a restarted edge resumes them.
// /admin/* answers with --admin-token; the control routes (approvals, /v1) listen on --control-listen.

import {
  createAdmission,
  createMcpEdge,
  createOAuthResourceServer,
  createRebindingGuard,
  HostedEdge,
  InputCheck,
  MemoryEdgeSessionStore,
  relayAgentMessages,
  relayedClientCapabilities,
  relaySharedServer,
  relayWrappedServer,
  type EdgeSessionStore,
  type StdioToolServer,
} from '@gate/mcp'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { GLOBAL_FLAGS_HELP } from '../config/global-flags.js'
import { formatBaseUrl, parseListenAddress } from '../config/listen-address.js'
import { checkCanListen, listenFailure } from '../config/listen-check.js'
import { LISTENER_TIMEOUT_FLAG_OPTIONS, readListenerTimeouts } from '../config/listener-timeouts.js'
import { isLoopback, loadTls, readTlsFlags, TLS_FLAG_OPTIONS, TLS_FLAGS_HELP } from '../config/tls-flags.js'
import { MCP_HTTP_DEFAULTS, MCP_HTTP_FLAG_OPTIONS, MCP_HTTP_FLAGS_HELP, readMcpHttpFlags } from '../config/mcp-http-flags.js'
import { resolveReceiptStore } from '../config/service-config.js'
import { createControlAuth } from '../http/control-auth.js'
import { Router } from '../http/router.js'
import { createGateServer } from '../http/server.js'
import { edgeSessionPathBeside, openEdgeSessionStore } from '../stores/edge-session-store.js'
import { UsageError } from '../errors.js'
import { sendJson } from '@gate/sdk/server'
import { SERVICE_POLICY_FLAGS_HELP } from './sidecar.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { checkWrappedServer, MCP_TOOL_SERVER_FLAG_OPTIONS, MCP_TOOL_SERVER_FLAGS_HELP, shutdownMcpToolService, signalled, startMcpToolService, type McpToolService } from './mcp-tool-server.js'
import { mountMcpAdminRoutes } from './mcp-http-admin.js'

export const MCP_SERVE_HTTP_USAGE = `Usage: gate mcp serve-http --listen ADDR [options] -- COMMAND [ARGS…]
       gate mcp serve-http --listen ADDR --spec FILE --upstream URL [options]

Serves MCP over Streamable HTTP (POST, GET and DELETE /mcp, protocol 2025-11-25) to remote agents and
decides every tools/call with the token's grants before the tool server sees it, exactly as
\`gate mcp serve\`; every decision is a signed receipt. A capability rides per session or per request as
the X-Gate-Capability header, or per call as _meta.gateCapability (which wins).

Options:
${MCP_TOOL_SERVER_FLAGS_HELP}
  --receipt-store PATH        SQLite receipt store; the other stores (edge sessions too) sit beside it
  --allow-ephemeral-receipts  keep receipts and sessions in memory only (lost on restart)
${SERVICE_POLICY_FLAGS_HELP}

${MCP_HTTP_FLAGS_HELP}

${TLS_FLAGS_HELP}

${GLOBAL_FLAGS_HELP}`

const FLAG_OPTIONS = { ...MCP_TOOL_SERVER_FLAG_OPTIONS, ...MCP_HTTP_FLAG_OPTIONS, ...TLS_FLAG_OPTIONS, ...LISTENER_TIMEOUT_FLAG_OPTIONS } as const

const NAME = 'mcp serve-http'

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes(NAME, MCP_SERVE_HTTP_USAGE, async () => {
    const { values, positionals } = parseFlags(argv, FLAG_OPTIONS, true)
    if (values.help === true) {
      process.stdout.write(MCP_SERVE_HTTP_USAGE + '\n')
      return 0
    }
    // every refusal of the flags comes before a store is opened or a child started
    const listen = parseListenAddress((values.listen as string | undefined) ?? MCP_HTTP_DEFAULTS.listen)
    const loopback = isLoopback(listen.host)
    const settings = await readMcpHttpFlags(values)
    const admissionGiven = (settings.admission.tokens?.length ?? 0) > 0 || settings.admission.jwt !== undefined || settings.oauth !== undefined
    if (!loopback && !admissionGiven) {
      throw new UsageError(`a hosted edge on ${listen.host} (not a loopback address) needs admission: --admission-token-file, GATE_MCP_ADMISSION_TOKENS, --jwt-key or --oauth-issuer`)
    }
    // the audience of access tokens: a non-loopback listener's own address is rarely the name clients use
    if (!loopback && settings.oauth !== undefined && settings.oauth.resourceUrl === undefined) {
      throw new UsageError(`--oauth-issuer on ${listen.host} (not a loopback address) needs --resource-url: the edge's canonical URL, the audience of its access tokens`)
    }
    // DNS rebinding: a non-loopback listener answers only the names the operator says it serves
    if (!loopback && settings.allowedHosts.length === 0) {
      throw new UsageError(`a hosted edge on ${listen.host} (not a loopback address) needs --allowed-host NAME: the Host names it answers (DNS rebinding)`)
    }
    const rebinding = createRebindingGuard({ loopback, listenHost: listen.host, allowedHosts: settings.allowedHosts, allowedOrigins: settings.allowedOrigins })
    // the authorization server's metadata is read now: an issuer that cannot be reached fails the start
    const oauth = settings.oauth === undefined ? undefined : await createOAuthResourceServer({ issuer: settings.oauth.issuer, scopes: settings.oauth.scopes })
    const admission = await createAdmission({ ...settings.admission, oauth, open: loopback })
    const tlsSettings = readTlsFlags(values, listen)
    const tls = await loadTls(tlsSettings)
    await checkCanListen(listen)
    const receiptStore = resolveReceiptStore(values['receipt-store'] as string | undefined, values['receipt-db'] as string | undefined)
    const tools = await startMcpToolService(values, positionals, NAME, (values['control-listen'] as string | undefined) ?? '127.0.0.1:0')
    const { log } = tools
    // a wrapped command that cannot start fails here, not at the first session
    let shared: StdioToolServer | undefined
    if (settings.sharedServer && tools.startWrapped !== undefined) {
      try {
        shared = await tools.startWrapped({})
      } catch (err) {
        await tools.service.close()
        throw err
      }
    } else await checkWrappedServer(tools)
    const sessions: SessionServers = { tools, shared, inputCheck: new InputCheck(), connections: 0 }
    let store: EdgeSessionStore
    let storeLocation: string
    const storePath = settings.edgeSessionStore ?? (receiptStore === undefined ? undefined : edgeSessionPathBeside(receiptStore))
    try {
      if (storePath === undefined) {
        store = new MemoryEdgeSessionStore()
        storeLocation = 'memory (sessions end with this process)'
      } else {
        store = await openEdgeSessionStore(storePath)
        storeLocation = storePath
      }
    } catch (err) {
      await shutdownMcpToolService(tools, async () => void (await shared?.close()))
      throw err
    }
    const edge: HostedEdge = new HostedEdge({
      createSessionServer: session => createSessionServer(sessions, session),
      store,
      admission,
      rebinding,
      limits: settings.limits,
      log,
    })
    if (shared !== undefined) relaySharedServer(shared, () => edge.readyServers(), log)
    const router = new Router()
    const mcp = (req: Parameters<HostedEdge['handle']>[0], res: Parameters<HostedEdge['handle']>[1]) => edge.handle(req, res)
    // the methods it does not serve reach the edge too, which answers 405 in its own error body
    for (const method of ['POST', 'GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS']) router.add(method, '/mcp', mcp)
    if (oauth !== undefined) {
      // RFC 9728: at the root well-known path, and the path-suffixed form for the /mcp resource
      const metadata = (_req: unknown, res: Parameters<HostedEdge['handle']>[1]) => void sendJson(res, 200, oauth.metadata())
      router.add('GET', '/.well-known/oauth-protected-resource', metadata)
      router.add('GET', '/.well-known/oauth-protected-resource/mcp', metadata)
    }
    if (settings.adminToken !== undefined) mountMcpAdminRoutes(router, { edge, auth: createControlAuth(settings.adminToken), tools, wrappedConnections: () => sessions.connections + (shared === undefined ? 0 : 1) })
    const server = createGateServer({ router, tls, screen: (req, res) => edge.screen(req, res), timeouts: readListenerTimeouts(values), onError: err => log(`request failed: ${(err as Error).message}`) })
    let address
    try {
      address = await server.listen(listen.host, listen.port)
      rebinding.bindPort(address.port)
    } catch (err) {
      await edge.close()
      await store.close()
      await shutdownMcpToolService(tools, async () => void (await shared?.close()))
      throw listenFailure(listen, err)
    }
    const url = formatBaseUrl(address.address, address.port).replace(/^http:/, tls === undefined ? 'http:' : 'https:')
    oauth?.bindResource(settings.oauth?.resourceUrl ?? `${url}/mcp`)
    log(`edge sessions: ${storeLocation}`)
    log(
      admission.mode === 'open'
        ? 'admission: open (loopback listener, no --admission-token-file or --jwt-key): every session is admitted; the capability token still decides every call'
        : `admission: required (${[settings.admission.tokens?.length ? `${settings.admission.tokens.length} bearer token(s)` : '', settings.admission.jwt ? 'JWT' : '', oauth ? `OAuth access tokens of ${oauth.issuer} for ${oauth.resource()}` : ''].filter(Boolean).join(' or ')})`,
    )
    if (tls === undefined && !loopback) log('transport: plaintext on a non-loopback address (--allow-plaintext-remote)')
    log(`admin routes: ${settings.adminToken === undefined ? 'off (no --admin-token)' : `${url}/admin/* (the admin token)`}`)
    if (tools.startWrapped !== undefined) log(`wrapped server: ${shared === undefined ? 'one process per session, told that session\'s client capabilities' : 'one process shared by every session (--shared-server)'}`)
    log(`control routes (approvals) on ${tools.service.url}`)
    log(`serving MCP (Streamable HTTP, protocol 2025-11-25) for ${tools.describe} as server_id ${tools.serverId}: mcp edge listening on ${url}/mcp`)
    await signalled()
    log(`draining: new requests get 503, requests in flight have ${settings.drainMs / 1000} s`)
    await edge.drain(settings.drainMs)
    await server.drain(1000)
    await store.close().catch(err => log(`closing the edge-session store failed: ${(err as Error).message}`))
    await shutdownMcpToolService(tools, async () => void (await shared?.close()))
    return 0
  })
}

interface SessionServers {
  tools: McpToolService
  /** The wrapped server every session shares (--shared-server). */
  shared: StdioToolServer | undefined
  /** One input check for every session: a tool's compiled schema is shared (input-check.ts). */
  inputCheck: InputCheck
  /** Live per-session connections to the wrapped server (child processes), for /admin/health. */
  connections: number
}

/**
 * One session's MCP edge, on the same tool-call path as `gate mcp serve`: over the session's own
 * connection to a wrapped server (started now, told the client capabilities the session declared, and
 * stopped when the session's Server closes), the shared one, or the OpenAPI API.
 */
async function createSessionServer(ctx: SessionServers, session: { id: string; capability: string | undefined; clientCapabilities: Record<string, unknown> }): Promise<Server> {
  const { tools } = ctx
  const sessionId = `mcp_${session.id}`
  let own: StdioToolServer | undefined
  if (tools.startWrapped !== undefined && ctx.shared === undefined) {
    own = await tools.startWrapped(relayedClientCapabilities(session.clientCapabilities))
    ctx.connections++
  }
  const wrapped = own ?? ctx.shared
  // the session's lineage: another session, another chain
  const chain = tools.decider.openChain()
  const server = createMcpEdge({
    chain,
    serverId: tools.serverId,
    toolServer: wrapped ?? tools.api!,
    decider: tools.callDecider,
    tracer: tools.tracer,
    // the initialize's X-Gate-Capability is the session's; without one, the process's
    sessionCapability: session.capability ?? tools.sessionCapability,
    requestCapability: headers => {
      const value = headers['x-gate-capability']
      return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
    },
    allowTools: tools.allowTools,
    approvalTools: tools.approvalTools,
    controlUrl: tools.service.url,
    sessionId,
    serverInfo: { name: 'gate', version: tools.version },
    relayedCapabilities: wrapped?.client.getServerCapabilities(),
    instructions: wrapped?.client.getInstructions(),
    inputCheck: ctx.inputCheck,
  })
  if (own !== undefined) {
    relayWrappedServer(server, own, { timeoutMs: tools.timeoutMs, log: tools.log, serverId: tools.serverId, sessionId, recorder: tools.decider, chain })
    server.onclose = () => {
      ctx.connections--
      void own.close().catch(err => tools.log(`stopping session ${session.id}'s tool server failed: ${(err as Error).message}`))
    }
  } else if (ctx.shared !== undefined) relayAgentMessages(server, ctx.shared, tools.timeoutMs, tools.log)
  return server
}
