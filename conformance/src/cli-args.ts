// `gate-conformance` flags → options (STYLE, Options: validated once, unknown flags rejected).
import { parseArgs } from 'node:util'
import { UsageError } from './errors.js'
import { parseUpstreamAddress } from './fakes/recording-upstream.js'

export const USAGE = `Usage: gate-conformance --start-sidecar [--spec FILE] [--json] [--only ID,...] [--no-sdk] [--strict-nonces]
                        [--issuer-seed-file PATH]
       gate-conformance --sidecar URL [--control-token T] [--spec FILE] [--json] [--only ID,...] [--no-sdk]
                        [--strict-nonces] [--issuer-seed-file PATH] [--proxy-upstream HOST:PORT]
       gate-conformance --mcp [--json] [--only ID,...] -- COMMAND [ARGS…]
       gate-conformance --wire unix:PATH [--json] [--only ID,...] [--request-timeout-ms N]
       gate-conformance --list [--json]
       gate-conformance --print-default-spec

Drives a Gate sidecar (or \`gate api protect\`) over HTTP and checks every behaviour of the sidecar
protocol observable from outside (spec 02, with the policy rules of spec 01).

Options:
  --start-sidecar        start a gate sidecar made for the suite (the document, a temporary store, its own
                         control token, a free port; a second one with strict nonces for the nonces.*
                         checks; a gate api protect in front of an upstream the suite records for the
                         proxy.* checks), run every check against them, then stop them and delete their
                         stores
  --sidecar URL          base URL of the sidecar under test, started with the suite's document and a
                         control token (or use --start-sidecar)
  --control-token T      its control token, for the checks that issue and revoke capability tokens
                         (default: the GATE_CONTROL_TOKEN environment variable; without one they are skipped)
  --spec FILE            the OpenAPI document the sidecar was started with (JSON; YAML when the "yaml"
                         package is installed); default: the built-in pets document
  --issuer-seed-file PATH
                         an Ed25519 seed (64 hex) whose public key the sidecar trusts as a capability issuer
                         (its --trusted-issuer, or the --authority-seed-file it runs with): the delegation
                         and token-field checks sign tokens and delegation links with it (without one they
                         are skipped)
  --only ID,...          run only these checks (repeatable)
  --json                 print the report as JSON instead of a table
  --no-sdk               skip the sdk.* checks (by default they drive @gate/sdk's createGateCore)
  --strict-nonces        the sidecar was started with strict execution nonces: run the nonces.* checks
                         (and only them; every other check expects a sidecar without strict nonces)
  --proxy-upstream HOST:PORT
                         the sidecar under test is a proxy (gate api protect) whose upstream is
                         http://HOST:PORT: the suite listens there, records what is forwarded and runs
                         the proxy.* checks (without it they are skipped)
  --request-timeout-ms N deadline of one HTTP exchange (default 5000)
  --mcp                  run the tool-call section instead: start the MCP edge COMMAND ARGS… over stdio
                         (e.g. gate mcp serve --allow-ephemeral-receipts -- node server.js, with no session
                         capability) and check its tools/list and tools/call answers
  --wire unix:PATH       run the native wire section instead, against the kernel's wire endpoint at PATH
                         (e.g. gate wire serve --listen unix:PATH): framing faults, heartbeat,
                         capability_list, denied calls and their receipts, canonical frames
  --list                 list the checks and exit
  --print-default-spec   print the built-in OpenAPI document (start the sidecar with it) and exit
  -h, --help             show this help

Exit codes: 0 every required check passed (or was skipped), 1 a required check failed, 2 usage error.`

export type CliCommand =
  | { kind: 'help' }
  | { kind: 'list'; json: boolean }
  | { kind: 'print-default-spec' }
  /** The tool-call section against the MCP edge `command` starts (--mcp). */
  | { kind: 'run-mcp'; command: string[]; only: string[]; json: boolean }
  /** The native wire section against the endpoint at `target` (--wire unix:PATH). */
  | { kind: 'run-wire'; target: string; only: string[]; json: boolean; requestTimeoutMs: number }
  | {
      kind: 'run'
      /** null: start sidecars for the suite (--start-sidecar). */
      sidecarUrl: string | null
      controlToken: string | null
      spec: string | undefined
      only: string[]
      json: boolean
      sdk: boolean
      strictNonces: boolean
      requestTimeoutMs: number
      issuerSeedFile: string | undefined
      /** Where the suite listens as the upstream of the proxy under test (--proxy-upstream). */
      proxyUpstream: { host: string; port: number } | undefined
    }

/** Parses argv (without node and the script); throws UsageError. */
export function parseCliArgs(argv: readonly string[], env: Record<string, string | undefined>): CliCommand {
  let values
  let positionals: string[]
  try {
    ;({ values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: argv.includes('--mcp'),
      options: {
        sidecar: { type: 'string' },
        'start-sidecar': { type: 'boolean' },
        'control-token': { type: 'string' },
        spec: { type: 'string' },
        only: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        'no-sdk': { type: 'boolean' },
        'strict-nonces': { type: 'boolean' },
        'issuer-seed-file': { type: 'string' },
        'request-timeout-ms': { type: 'string' },
        'proxy-upstream': { type: 'string' },
        list: { type: 'boolean' },
        mcp: { type: 'boolean' },
        wire: { type: 'string' },
        'print-default-spec': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (err) {
    throw new UsageError((err as Error).message, err)
  }
  if (values.help === true) return { kind: 'help' }
  if (values.list === true) return { kind: 'list', json: values.json === true }
  if (values['print-default-spec'] === true) return { kind: 'print-default-spec' }
  if (values.mcp === true) {
    if (positionals.length === 0) throw new UsageError('--mcp needs the edge to start: -- COMMAND ARGS…')
    return { kind: 'run-mcp', command: positionals, only: (values.only ?? []).flatMap(v => v.split(',')).map(s => s.trim()).filter(s => s !== ''), json: values.json === true }
  }
  if (values.wire !== undefined) {
    if (!values.wire.startsWith('unix:') || values.wire.length <= 'unix:'.length) throw new UsageError(`--wire must be unix:PATH, got "${values.wire}"`)
    return { kind: 'run-wire', target: values.wire, only: (values.only ?? []).flatMap(v => v.split(',')).map(s => s.trim()).filter(s => s !== ''), json: values.json === true, requestTimeoutMs: readTimeout(values['request-timeout-ms']) }
  }
  const start = values['start-sidecar'] === true
  if (start && values.sidecar !== undefined) throw new UsageError('give --sidecar URL or --start-sidecar, not both')
  if (start && values['control-token'] !== undefined) throw new UsageError('--start-sidecar gives the sidecar it starts a control token of its own: leave --control-token out')
  if (start && values['proxy-upstream'] !== undefined) throw new UsageError('--start-sidecar starts a proxy in front of a recording upstream of its own: leave --proxy-upstream out')
  if (!start && (values.sidecar === undefined || values.sidecar === '')) {
    throw new UsageError('--sidecar URL is required (or --start-sidecar, to run the suite against a gate sidecar it starts for itself)')
  }
  const requestTimeoutMs = readTimeout(values['request-timeout-ms'])
  const token = start ? undefined : (values['control-token'] ?? env.GATE_CONTROL_TOKEN)
  return {
    kind: 'run',
    sidecarUrl: start ? null : values.sidecar!,
    controlToken: token === undefined || token === '' ? null : token,
    spec: values.spec,
    only: (values.only ?? []).flatMap(v => v.split(',')).map(s => s.trim()).filter(s => s !== ''),
    json: values.json === true,
    sdk: values['no-sdk'] !== true,
    strictNonces: values['strict-nonces'] === true,
    requestTimeoutMs,
    issuerSeedFile: values['issuer-seed-file'],
    proxyUpstream: values['proxy-upstream'] === undefined ? undefined : parseUpstreamAddress(values['proxy-upstream']),
  }
}

function readTimeout(value: string | undefined): number {
  const text = value ?? '5000'
  const ms = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(ms) || ms < 100 || ms > 120_000) {
    throw new UsageError(`--request-timeout-ms must be a whole number of milliseconds from 100 to 120000, got "${text}"`)
  }
  return ms
}
