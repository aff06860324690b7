// `gate capability issue|revoke`: issue and revoke capability tokens through a sidecar's (or
// trust-control's) /v1 routes. `issue` also works offline: with --authority-seed-file and no
// --control-url it signs the token here with that key (the key a `gate run` or `gate mcp serve` started
// with the same seed file trusts), for agents that need a token before any service runs.
import { canonicalJson, signCapability, uuidv7 } from '@gate/sdk'
import { UsageError } from '../errors.js'
import { loadAuthority } from '../config/authority-seed.js'
import { GLOBAL_FLAG_OPTIONS, GLOBAL_FLAGS_HELP, readGlobalFlags } from '../config/global-flags.js'
import { checkHttpGrants, GRANT_FLAG_OPTIONS, GRANT_FLAGS_HELP, readGrants } from './capability-grants.js'
import { createControlClient } from './control-client.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { escapeControls, escapeJsonControls } from './terminal-text.js'

const ISSUE_USAGE = `Usage: gate capability issue --subject HEX (--grant "METHOD /route" | --tool SERVER:TOOL) ... [--ttl SECONDS]
                             [--max-invocations N] [constraints] [--json]

Asks the sidecar (or trust-control) at --control-url to sign a capability token for the agent key HEX,
or, given --authority-seed-file and no --control-url, signs it here with that key (offline).
A grant is "METHOD /route" as written in the OpenAPI document (e.g. "POST /pets", "DELETE /pets/{id}"),
an operationId, or a wildcard ("*", "POST *", "POST /pets/*"), or a tool as SERVER:TOOL; see
docs/capabilities.md. Prints the token as one line of canonical JSON (what an agent of gate run puts
in capability_token as is), then the X-Gate-Capability header value (base64url) on its own line. A
grant that covers no route of the sidecar's OpenAPI document is issued with a warning on stderr; with
--spec FILE it is refused. A --grant that is a bare name is an operationId of an HTTP route (server
"http"), which stderr says: a tool of an MCP server is --tool SERVER:TOOL.

Options:
  --subject HEX           the agent's Ed25519 public key (64 hex characters)
${GRANT_FLAGS_HELP}
  --ttl SECONDS           lifetime (default 3600)
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
    ttl: { type: 'string' },
    json: { type: 'boolean' },
    ...GRANT_FLAG_OPTIONS,
    ...GLOBAL_FLAG_OPTIONS,
  })
  if (values.help === true) {
    process.stdout.write(ISSUE_USAGE + '\n')
    return 0
  }
  const subject = values.subject
  if (typeof subject !== 'string' || !/^[0-9a-f]{64}$/.test(subject)) throw new UsageError('--subject must be 64 lowercase hex characters (an Ed25519 public key)')
  const grants = readGrants(values)
  for (const note of await checkHttpGrants(values, grants)) process.stderr.write(`gate capability issue: note: ${escapeControls(note)}\n`)
  const ttl = values.ttl === undefined ? 3600 : Number(values.ttl)
  if (!Number.isSafeInteger(ttl) || ttl < 1) throw new UsageError(`--ttl must be a positive integer, got "${String(values.ttl)}"`)
  const global = readGlobalFlags(values)
  let capability: unknown
  if (global.authoritySeedFile !== undefined && global.controlUrl === undefined) {
    const { signer } = await loadAuthority(global.authoritySeedFile)
    const at = Math.floor(Date.now() / 1000)
    capability = signCapability({ schema: 'gate.capability.v1', id: `cap_${uuidv7()}`, subject, scope: { grants }, issued_at: at, expires_at: at + ttl }, signer)
  } else {
    if (global.authoritySeedFile !== undefined) throw new UsageError('give --control-url (the server signs) or --authority-seed-file (signed here, offline), not both')
    const answer = (await createControlClient(global).post('/v1/capabilities/issue', { subjectPublicKey: subject, scope: { grants }, ttlSeconds: ttl })) as { capability: unknown; warnings?: unknown }
    warn('capability issue', answer.warnings)
    capability = answer.capability
  }
  // canonical: the bytes the signature covers; the answer is the server's, so nothing in it may drive the terminal
  const json = canonicalJson(capability)
  process.stdout.write(escapeJsonControls(json) + '\n')
  if (values.json !== true) process.stdout.write(Buffer.from(json).toString('base64url') + '\n')
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
