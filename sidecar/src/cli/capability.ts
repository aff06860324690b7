// `gate capability issue|revoke`: issue and revoke capability tokens through a sidecar's (or
// trust-control's) /v1 routes.
import { UsageError } from '../errors.js'
import { GLOBAL_FLAG_OPTIONS, GLOBAL_FLAGS_HELP, readGlobalFlags } from '../config/global-flags.js'
import { createControlClient } from './control-client.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { escapeControls, escapeJsonControls } from './terminal-text.js'

const ISSUE_USAGE = `Usage: gate capability issue --subject HEX --grant "METHOD /route" [--grant ...] [--ttl SECONDS] [--max-invocations N] [--json]

Asks the sidecar (or trust-control) at --control-url to sign a capability token for the agent key HEX.
A grant is "METHOD /route" as written in the OpenAPI document (e.g. "POST /pets", "DELETE /pets/{id}"),
an operationId, or a wildcard ("*", "POST *", "POST /pets/*"); see docs/capabilities.md.
Prints the token JSON, then the X-Gate-Capability header value (base64url) on its own line. A grant
that covers no route of the sidecar's OpenAPI document is issued with a warning on stderr.

Options:
  --subject HEX           the agent's Ed25519 public key (64 hex characters)
  --grant SPEC            a route the token may call (repeatable)
  --ttl SECONDS           lifetime (default 3600)
  --max-invocations N     cap on uses of each grant
  --json                  print only the token JSON

${GLOBAL_FLAGS_HELP}`

const REVOKE_USAGE = `Usage: gate capability revoke ID|TOKEN

Revokes a capability at --control-url; later requests presenting it are denied. Give its id, or the
token itself (the X-Gate-Capability value gate capability issue printed, or the token JSON). Prints the
answer as JSON; revoking an id the server never issued is done all the same, with a warning (on stderr
and in the answer's "warnings").

${GLOBAL_FLAGS_HELP}`

export async function run(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv
  if (verb === 'issue') return runWithExitCodes('capability issue', ISSUE_USAGE, () => issue(rest))
  if (verb === 'revoke') return runWithExitCodes('capability revoke', REVOKE_USAGE, () => revoke(rest))
  process.stderr.write(`Usage: gate capability (issue|revoke) ...\n\n${ISSUE_USAGE}\n\n${REVOKE_USAGE}\n`)
  return verb === '--help' || verb === '-h' ? 0 : 2
}

async function issue(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    subject: { type: 'string' },
    grant: { type: 'string', multiple: true },
    ttl: { type: 'string' },
    'max-invocations': { type: 'string' },
    json: { type: 'boolean' },
    ...GLOBAL_FLAG_OPTIONS,
  })
  if (values.help === true) {
    process.stdout.write(ISSUE_USAGE + '\n')
    return 0
  }
  const subject = values.subject
  if (typeof subject !== 'string' || !/^[0-9a-f]{64}$/.test(subject)) throw new UsageError('--subject must be 64 lowercase hex characters (an Ed25519 public key)')
  const grants = (values.grant as string[] | undefined) ?? []
  if (grants.length === 0) throw new UsageError('at least one --grant is required')
  const ttl = values.ttl === undefined ? 3600 : Number(values.ttl)
  if (!Number.isSafeInteger(ttl) || ttl < 1) throw new UsageError(`--ttl must be a positive integer, got "${String(values.ttl)}"`)
  const max = values['max-invocations'] === undefined ? undefined : Number(values['max-invocations'])
  if (max !== undefined && (!Number.isSafeInteger(max) || max < 0)) throw new UsageError('--max-invocations must be a non-negative integer')
  const client = createControlClient(readGlobalFlags(values))
  const body = {
    subjectPublicKey: subject,
    scope: { grants: grants.map(g => ({ server_id: 'http', tool_name: g.trim(), ...(max === undefined ? {} : { max_invocations: max }) })) },
    ttlSeconds: ttl,
  }
  const { capability, warnings } = (await client.post('/v1/capabilities/issue', body)) as { capability: unknown; warnings?: unknown }
  warn('capability issue', warnings)
  // the answer is the server's: nothing in it may drive the terminal
  process.stdout.write(escapeJsonControls(JSON.stringify(capability)) + '\n')
  if (values.json !== true) process.stdout.write(Buffer.from(JSON.stringify(capability)).toString('base64url') + '\n')
  return 0
}

async function revoke(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, GLOBAL_FLAG_OPTIONS, true)
  if (values.help === true) {
    process.stdout.write(REVOKE_USAGE + '\n')
    return 0
  }
  if (positionals.length !== 1) throw new UsageError('expected exactly one capability ID (or token)')
  const client = createControlClient(readGlobalFlags(values))
  const result = (await client.post('/v1/revocations', { capabilityId: capabilityIdOf(positionals[0]!) })) as { warnings?: unknown }
  warn('capability revoke', result.warnings)
  process.stdout.write(escapeJsonControls(JSON.stringify(result)) + '\n')
  return 0
}

/** The id a revoke argument names: the argument itself, or the `id` of a token given as JSON or base64url JSON. */
export function capabilityIdOf(argument: string): string {
  const text = argument.startsWith('{') ? argument : Buffer.from(argument, 'base64url').toString('utf8')
  if (!text.startsWith('{')) return argument
  try {
    const id = (JSON.parse(text) as { id?: unknown }).id
    return typeof id === 'string' && id !== '' ? id : argument
  } catch {
    return argument
  }
}

/** The server's warnings (Gate's additive `warnings` member), one line each on stderr. */
function warn(command: string, warnings: unknown): void {
  if (!Array.isArray(warnings)) return
  // a warning quotes the caller's grant, and the answer comes from a server (terminal-text.ts)
  for (const w of warnings) process.stderr.write(`gate ${command}: warning: ${escapeControls(String(w))}\n`)
}
