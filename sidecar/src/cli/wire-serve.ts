// `gate wire serve --listen unix:PATH | HOST:PORT`: the native wire for long-running agents
// (docs/wire.md), the same kernel, tool servers and flags as `gate run`. A Unix socket is created
// owner-only; TCP is for agents on other hosts and needs mutual TLS (spec 03, Authentication 5):
// --tls-cert and --tls-key for the server, --tls-client-ca for the agents' certificates. On SIGTERM or
// SIGINT every call in flight is cancelled and answered `cancelled` with its receipt, then it stops.
import { readFile } from 'node:fs/promises'
import { WIRE_VERSION } from '@gate/sdk/wire'
import { GLOBAL_FLAGS_HELP } from '../config/global-flags.js'
import { parseServiceListenAddress } from '../config/listen-address.js'
import { checkCanListen } from '../config/listen-check.js'
import { loadTls, TLS_FLAG_OPTIONS } from '../config/tls-flags.js'
import { listenWire, type WireListenSettings } from '../app/wire-listener.js'
import { ConfigError, UsageError } from '../errors.js'
import { SERVICE_POLICY_FLAGS_HELP } from './sidecar.js'
import { signalled } from './mcp-tool-server.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { startWireService, WIRE_SERVICE_FLAG_OPTIONS, WIRE_TOOL_FLAGS_HELP } from './wire-service.js'

export const WIRE_SERVE_USAGE = `Usage: gate wire serve --listen unix:PATH [options]
       gate wire serve --listen HOST:PORT --tls-cert PATH --tls-key PATH --tls-client-ca PATH [options]

Serves Gate's native wire (${WIRE_VERSION}; docs/wire.md) to long-running agents: each connection sends
tool_call_request frames, decided with the capability they present and recorded as signed receipts
before they are answered.

Options:
  --listen ADDR               unix:PATH (a socket created 0600), or HOST:PORT (mutual TLS, required)
  --tls-cert PATH             the server's PEM certificate (chain), for HOST:PORT
  --tls-key PATH              its PEM private key
  --tls-client-ca PATH        PEM CA certificate(s) an agent's client certificate must chain to
${WIRE_TOOL_FLAGS_HELP}
  --receipt-store PATH        SQLite receipt store; the other stores sit beside it
  --allow-ephemeral-receipts  keep receipts in memory only (lost on restart); local development only
${SERVICE_POLICY_FLAGS_HELP}

${GLOBAL_FLAGS_HELP}`

const { 'allow-plaintext-remote': _plaintext, ...TLS_OPTIONS } = TLS_FLAG_OPTIONS
const FLAG_OPTIONS = { ...WIRE_SERVICE_FLAG_OPTIONS, ...TLS_OPTIONS, 'tls-client-ca': { type: 'string' } } as const

const NAME = 'wire serve'

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes(NAME, WIRE_SERVE_USAGE, async () => {
    const { values } = parseFlags(argv, FLAG_OPTIONS)
    if (values.help === true) {
      process.stdout.write(WIRE_SERVE_USAGE + '\n')
      return 0
    }
    // every refusal of the flags comes before a store is opened or a tool server started
    const settings = await readListen(values)
    const wire = await startWireService(values, NAME)
    let listener
    try {
      listener = await listenWire(settings, wire.endpoint)
    } catch (err) {
      await wire.close('gate wire serve could not listen')
      throw err
    }
    wire.log(`tool servers: ${wire.describe}`)
    wire.log(`control routes (approvals) on ${wire.service.url}`)
    wire.log(`wire (${WIRE_VERSION}) listening on ${listener.url}${settings.kind === 'tls' ? ' (mutual TLS)' : ''}`)
    await signalled()
    wire.log(`stopping: calls in flight are cancelled (${wire.endpoint.connections} connection(s) open)`)
    const stopped = listener.close()
    await wire.close('gate wire serve is stopping')
    await stopped
    return 0
  })
}

async function readListen(values: Record<string, unknown>): Promise<WireListenSettings> {
  const given = values.listen as string | undefined
  if (given === undefined) throw new UsageError('--listen is required: unix:PATH, or HOST:PORT with mutual TLS')
  const listen = parseServiceListenAddress(given)
  const tlsFlags = ['tls-cert', 'tls-key', 'tls-client-ca'].filter(f => values[f] !== undefined)
  if (listen.kind === 'unix') {
    if (tlsFlags.length > 0) throw new UsageError(`--${tlsFlags[0]} is for a TCP listener; a Unix socket is guarded by its file permissions`)
    return { kind: 'unix', path: listen.path }
  }
  if (tlsFlags.length !== 3) throw new UsageError('a TCP listener needs mutual TLS: give --tls-cert, --tls-key and --tls-client-ca (or listen on unix:PATH)')
  const tls = (await loadTls({ certPath: values['tls-cert'] as string, keyPath: values['tls-key'] as string, allowPlaintextRemote: false }))!
  const caPath = values['tls-client-ca'] as string
  const clientCa = await readFile(caPath).catch(err => {
    throw new ConfigError(`cannot read --tls-client-ca ${caPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  })
  await checkCanListen(listen)
  return { kind: 'tls', host: listen.host, port: listen.port, cert: tls.cert, key: tls.key, clientCa }
}
