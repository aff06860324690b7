// `gate api protect`: the zero-code reverse proxy of spec 01. Startup order (spec 01): (1) the
// durable-receipts gate, (2) the OpenAPI document from --spec or auto-discovery, (3) parse it into the
// route table, (4) the signing keypair, (5) policy_hash over the document bytes, (6) the stores,
// (7) bind. Steps 1 and 4-7 are `gate sidecar`'s (startFromFlags); this module adds the upstream, the
// document source and the proxy as the fallback handler for every non-Gate route.
import { tracedEvaluator } from '../observability/traced-evaluator.js'
import { ConfigError, isOpenApiError, UsageError } from '../errors.js'
import { GLOBAL_FLAGS_HELP } from '../config/global-flags.js'
import { policyFromBytes, type LoadedPolicy } from '../app/load-policy.js'
import type { Evaluation } from '../kernel/kernel.js'
import { createProxy, DEFAULTS as PROXY_DEFAULTS, EGRESS_DEFAULTS, loadSpecDocument, parseUpstreamUrl, ProtectError, type GateProxy, type UpstreamTarget } from '@gate/proxy'
import { HTTP_ROUTE_FLAG_OPTIONS, HTTP_ROUTE_FLAGS_HELP, SERVICE_FLAG_OPTIONS, SERVICE_POLICY_FLAGS_HELP, SERVICE_STORE_FLAGS_HELP, startFromFlags, waitForShutdown } from './sidecar.js'
import { parseFlags, readSecondsFlag, runWithExitCodes } from './parse-flags.js'
import { createGateLogger, errorFields, lineLogger } from '../observability/logger.js'
import { readObservabilityFlags } from '../config/observability-flags.js'

export const API_PROTECT_USAGE = `Usage: gate api protect --upstream URL [--spec FILE] [--listen ADDR] (--receipt-store PATH | --allow-ephemeral-receipts) [--upstream-timeout-secs N] [--spec-sha256 HEX] [options]

Reverse proxy that puts capability-based access control in front of an existing HTTP API: each request
is classified by its OpenAPI route and method, mutating methods need a capability token
(X-Gate-Capability header or gate_capability query parameter), allowed requests are forwarded to the
upstream, and every request gets a signed receipt (X-Gate-Receipt-Id names the finalized receipt,
which records the status the client was answered with). The Gate routes (/gate/*, /approvals, /v1/*)
are served by the same process. A request whose path matches no operation of the document gets the
method rule (an undocumented GET, HEAD or OPTIONS is forwarded without a capability) unless
--deny-unmatched is given.

Options:
  --upstream URL              upstream base URL, http or https (required); its path is kept as a
                              prefix of every forwarded path
  --spec FILE                 OpenAPI 3.x document (JSON or YAML) giving the route policy; without it
                              the document is discovered at the upstream (GET /openapi.json,
                              /openapi.yaml, /swagger.json, /api-docs; same origin only), which lets
                              the upstream decide its own policy: pin it with --spec-sha256
  --spec-sha256 HEX           refuse to start unless the document's SHA-256 is HEX (64 hex)
${SERVICE_STORE_FLAGS_HELP}
  --upstream-timeout-secs N   wall-clock ceiling of one upstream hop including reading the whole
                              response (default ${PROXY_DEFAULTS.upstreamTimeoutMs / 1000}); a hop past it answers 502, or is cut off if the
                              response had started
${HTTP_ROUTE_FLAGS_HELP}
${SERVICE_POLICY_FLAGS_HELP}

${GLOBAL_FLAGS_HELP}`

export const API_PROTECT_FLAG_OPTIONS = {
  ...SERVICE_FLAG_OPTIONS,
  ...HTTP_ROUTE_FLAG_OPTIONS,
  upstream: { type: 'string' },
  'upstream-timeout-secs': { type: 'string' },
  'spec-sha256': { type: 'string' },
} as const

const NAME = 'api protect'

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes(NAME, API_PROTECT_USAGE, async () => {
    const { values } = parseFlags(argv, API_PROTECT_FLAG_OPTIONS)
    if (values.help === true) {
      process.stdout.write(API_PROTECT_USAGE + '\n')
      return 0
    }
    const upstreamText = values.upstream
    if (typeof upstreamText !== 'string' || upstreamText === '') throw new UsageError('--upstream URL is required')
    const timeoutSecs = readSecondsFlag(values['upstream-timeout-secs'], '--upstream-timeout-secs', PROXY_DEFAULTS.upstreamTimeoutMs / 1000)
    const expectedSha256 = readSha256(values['spec-sha256'])
    const specPath = values.spec as string | undefined
    // one logger from the first line on: the service gets it too. JSON lines escape every control
    // character, so a hostile upstream URL or document name cannot drive the terminal.
    const logger = createGateLogger(`gate ${NAME}`, readObservabilityFlags(values).logLevel)
    const log = lineLogger(logger)

    let upstream: UpstreamTarget | undefined
    let proxy: GateProxy | undefined
    let routes = 0
    const service = await startFromFlags(values, NAME, {
      logger,
      // runs right after the durable-receipts gate: upstream check, then steps 2, 3 and 5
      policyLoader: async (routeOptions): Promise<LoadedPolicy> => {
        upstream = parseUpstreamUrl(upstreamText)
        const doc = await loadSpecDocument({ specPath, upstream, expectedSha256, discovery: { ...EGRESS_DEFAULTS, timeoutMs: timeoutSecs * 1000 } })
        if (doc.discovered) {
          log(
            `warning: no --spec; using the OpenAPI document served by the upstream at ${doc.source} (sha256 ${doc.sha256}). ` +
              'The upstream decides its own policy this way; pass --spec FILE, or pin this document with --spec-sha256',
          )
        }
        try {
          const policy = policyFromBytes(doc.bytes, doc.source, routeOptions)
          routes = policy.routeCount
          return policy
        } catch (err) {
          if (isOpenApiError(err)) throw new ProtectError('SpecParse', `${doc.source}: ${err.message}`, err)
          throw err
        }
      },
      fallback: (kernel, tracer) => {
        if (upstream === undefined) throw new ConfigError('internal: the upstream was not resolved before the proxy was created')
        proxy = createProxy<Evaluation>(
          tracer === undefined ? kernel : tracedEvaluator(kernel, tracer),
          { upstream: upstream.href, upstreamTimeoutMs: timeoutSecs * 1000 },
          { onUnexpectedError: err => logger.error({ event: 'proxy_relay_failed', ...errorFields(err) }, 'upstream relay failed; answered 502'), tracer },
        )
        return (req, res) => (proxy as GateProxy).handle(req, res)
      },
    })
    // spec 01: the proxy logs the route count, upstream URL and bound address
    log(`protecting ${upstream?.href} with ${routes} routes on ${service.url}`)
    await waitForShutdown({ logger: service.logger, inFlight: () => service.server.inFlight(), close: () => service.close() })
    await proxy?.close()
    return process.exitCode === 1 ? 1 : 0
  })
}


function readSha256(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{64}$/.test(value)) throw new UsageError(`--spec-sha256 must be 64 hex characters, got "${String(value)}"`)
  return value.toLowerCase()
}
