// `gate receipt list|verify|explain` (spec 03, Receipt CLI).
//   list     the receipt query, locally over --receipt-db or remotely over --control-url, one JSON receipt
//            per line on stdout, as stored (pipes into jq) but for characters a terminal would act on,
//            written as \uXXXX escapes (the same JSON value); the next cursor goes to stderr, and so does
//            each receipt trust-control found not to verify (exit 1)
//   verify   offline verification of HTTP or core receipts (JSON lines, an array, one object, or a query
//            response), one line per receipt: ok, or the failing step; exit 1 if any fails, or if no
//            --trusted-key was given (unless --allow-untrusted): a valid signature by an unknown key
//            proves nothing
//   explain  one receipt in words (receipt-explain.ts)
// Everything printed from a receipt goes through terminal-text.ts.
import { readFile } from 'node:fs/promises'
import { checkHttpReceipt, createSigner, generateSecret, hexToBytes, parseJsonExact, readJson, EXACT_JSON_LIMITS, verifyCoreReceipt, type Signer } from '@gate/sdk'
import { createCorpusPort, parseReceiptQuery, ReceiptQueryEngine, PAGE_LIMIT, type Principal, type UnverifiedReceipt } from '@gate/trust'
import { ConfigError, UsageError } from '../errors.js'
import { GLOBAL_FLAG_OPTIONS, readGlobalFlags } from '../config/global-flags.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { createControlClient, describeRefusal } from './control-client.js'
import { EXPLAIN_USAGE, explain } from './receipt-explain.js'
import { TRANSPARENCY_COMMANDS } from './receipt-log.js'
import { dropOutputAfterClosedPipe } from './closed-output.js'
import { readNewest, type PageReader } from './receipt-pages.js'
import { errorOf, openExistingStore, SOURCE_HELP } from './receipt-source.js'
import { escapeControls, escapeJsonControls } from './terminal-text.js'
import { chooseLogSource } from './transparency-source.js'

export const LIST_USAGE = `Usage: gate receipt list (--receipt-db PATH (--tenant ID | --admin-all) | --control-url URL) [filters]

Prints the receipts matching every filter given, oldest first (newest first with --newest), one JSON
receipt per line exactly as stored (core receipts; a receipt whose core form cannot be produced is
printed in its signed HTTP form).
When the page is full, "next cursor: N" is written to stderr: pass --cursor N for the next page.
A receipt whose stored text does not verify is printed as stored (never signed anew), named on stderr
with the failing step ("not verified"), and makes the exit code 1.

Filters:
  --capability ID             capability id (exact)
  --tool-server NAME          tool server (exact; "http" for HTTP receipts)
  --tool-name NAME            tool name (exact; "METHOD /route" for HTTP receipts)
  --outcome OUTCOME           allow, deny, cancelled or incomplete
  --since SEC                 timestamp >= SEC (Unix seconds, inclusive)
  --until SEC                 timestamp <= SEC (inclusive)
  --min-cost UNITS            charged cost >= UNITS minor units (requires --cost-currency)
  --max-cost UNITS            charged cost <= UNITS minor units (requires --cost-currency)
  --cost-currency CODE        three uppercase letters (e.g. USD)
  --limit N                   page size, clamped to 1..200 (default 50)
  --cursor SEQ                only receipts after this cursor (a value printed as "next cursor")
  --newest                    the --limit newest matches, newest first (reads every match: narrow a large
                              store with --since/--until); not with --cursor
Read context (local --receipt-db mode: exactly one is required; over --control-url the token decides):
  --tenant ID                 only receipts whose caller tenant is ID
  --admin-all                 every receipt
  --authority-seed-file PATH  local mode: produce the core form of rows not read through trust-control
                              yet (otherwise they print in their HTTP form)

${SOURCE_HELP}`

export const VERIFY_USAGE = `Usage: gate receipt verify FILE|- (--trusted-key KEY ... | --allow-untrusted) [--proof FILE]

Verifies receipts offline, each step in spec 02's order: HTTP receipts (semantics, id, signature,
signer, content hash) and core receipts (kind coherence, the content-addressed id, the signature over
{id, body}, signer, content hash form). Input: JSON lines (as printed
by gate receipt list), a JSON array, one receipt object, or a receipt query response. Prints one line
per receipt, "ok ...", "UNTRUSTED ..." or "FAIL <id> <step>: <why>", and exits 1 if any fails or
is untrusted.

Options:
  --trusted-key KEY           a trusted signer public key (repeatable): the kernel_key from GET
                              /gate/live, or the authority's trustedPublicKeys
  --allow-untrusted           without --trusted-key, accept a valid signature by any key: each receipt is
                              reported "ok ... signer untrusted" and the exit code is 0. Without this
                              flag such receipts are UNTRUSTED and the exit code is 1 (anyone can sign a
                              receipt with a key of their own)
  --proof FILE                inclusion proofs (gate receipt proof ID) of the receipts, and optionally
                              consistency proofs, checked against the same --trusted-key: every receipt must
                              be shown included in a signed checkpoint`

const LIST_FLAGS = {
  capability: { type: 'string' },
  'tool-server': { type: 'string' },
  'tool-name': { type: 'string' },
  outcome: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  'min-cost': { type: 'string' },
  'max-cost': { type: 'string' },
  'cost-currency': { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  newest: { type: 'boolean' },
  tenant: { type: 'string' },
  'admin-all': { type: 'boolean' },
  ...GLOBAL_FLAG_OPTIONS,
} as const

// CLI flag → query parameter of GET /v1/receipts/query
const FILTER_PARAMETERS: [keyof typeof LIST_FLAGS, string][] = [
  ['capability', 'capabilityId'],
  ['tool-server', 'toolServer'],
  ['tool-name', 'toolName'],
  ['outcome', 'outcome'],
  ['since', 'since'],
  ['until', 'until'],
  ['min-cost', 'minCost'],
  ['max-cost', 'maxCost'],
  ['cost-currency', 'costCurrency'],
  ['limit', 'limit'],
  ['cursor', 'cursor'],
]

export async function run(argv: string[]): Promise<number> {
  // every receipt command prints for a reader that may stop early (| head)
  dropOutputAfterClosedPipe()
  const [verb, ...rest] = argv
  if (verb === 'list') return runWithExitCodes('receipt list', LIST_USAGE, () => list(rest))
  if (verb === 'verify') return runWithExitCodes('receipt verify', VERIFY_USAGE, () => verify(rest))
  if (verb === 'explain') return runWithExitCodes('receipt explain', EXPLAIN_USAGE, () => explain(rest))
  const transparency = TRANSPARENCY_COMMANDS[verb ?? '']
  if (transparency !== undefined) return transparency(rest)
  const help = `Usage: gate receipt (list|verify|explain|proof|health|flush|checkpoint|audit) ...\n\n${LIST_USAGE}\n\n${VERIFY_USAGE}\n\n${EXPLAIN_USAGE}\n\nTransparency log: gate receipt proof|health|flush|checkpoint|audit --help\n`
  if (verb === '--help' || verb === '-h' || verb === 'help') {
    process.stdout.write(help)
    return 0
  }
  process.stderr.write(verb === undefined ? help : `gate receipt: unknown subcommand "${verb}"\n\n${help}`)
  return 2
}

// ---- list ----

async function list(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, LIST_FLAGS)
  if (values.help === true) {
    process.stdout.write(LIST_USAGE + '\n')
    return 0
  }
  // Checked before anything runs (spec 03: both is rejected before the command runs).
  if (values.tenant !== undefined && values['admin-all'] === true) throw new UsageError('--tenant and --admin-all are mutually exclusive')
  for (const bound of ['min-cost', 'max-cost'] as const) {
    if (values[bound] !== undefined && values['cost-currency'] === undefined) throw new UsageError(`--${bound} requires --cost-currency`)
  }
  const global = readGlobalFlags(values)
  const params = new URLSearchParams()
  for (const [flag, parameter] of FILTER_PARAMETERS) {
    const value = values[flag]
    if (typeof value === 'string') params.set(parameter, value)
  }
  if (!params.has('limit')) params.set('limit', String(PAGE_LIMIT.default))
  let query
  try {
    query = parseReceiptQuery(new URL(`http://gate.local/v1/receipts/query?${params}`))
  } catch (err) {
    // the same validation as the route: a bad filter is a usage error here
    throw new UsageError(flagWording((err as Error).message))
  }
  const newest = values.newest === true
  if (newest && values.cursor !== undefined) throw new UsageError('--newest reads back from the newest receipt and --cursor forward from one: give one or the other (narrow --newest with --until SEC)')
  const mode = chooseLogSource(global)
  let pageOf: PageReader
  let close = async () => {}
  if (mode === 'remote') {
    if (values.tenant !== undefined || values['admin-all'] === true) {
      throw new UsageError('--tenant and --admin-all apply to --receipt-db; over --control-url the token decides what is read')
    }
    const client = createControlClient(global)
    pageOf = async (cursor, limit) => {
      // a cursor beyond every stored seq (undefined) is sent as given: the route answers an empty page
      if (cursor !== undefined) params.set('cursor', String(cursor))
      params.set('limit', String(limit))
      const { status, text } = await client.getText(`/v1/receipts/query?${params}`)
      if (status !== 200) throw new Error(describeRefusal('GET /v1/receipts/query', status, errorOf(text)))
      // the receipts byte for byte as the server sent them (JSON.parse would round big integers and reorder keys)
      const page = readJson(text, { ...EXACT_JSON_LIMITS, rawElementsOf: 'receipts' })
      if (page.rawElements === undefined) throw new Error('the response has no "receipts" array')
      const { nextCursor, totalCount, unverifiedReceipts } = page.value as { nextCursor: number | null; totalCount: number; unverifiedReceipts?: UnverifiedReceipt[] }
      return { receipts: page.rawElements, nextCursor, totalCount, unverified: unverifiedReceipts ?? [] }
    }
  } else {
    if (values.tenant === undefined && values['admin-all'] !== true) throw new UsageError('--receipt-db needs exactly one of --tenant ID or --admin-all')
    const principal: Principal = values['admin-all'] === true ? { kind: 'admin' } : { kind: 'tenant', tenant: values.tenant as string }
    const signer = global.authoritySeedFile === undefined ? unmatchedSigner() : await readSigner(global.authoritySeedFile)
    const store = await openExistingStore(global.receiptDb!)
    close = () => store.close()
    const engine = new ReceiptQueryEngine({
      corpus: createCorpusPort(store),
      // the CLI has no agent filter, so the lineage is never consulted
      lineage: { idsForSubject: async () => [], subjectsOf: async () => new Map() },
      // the seed's key is the one a row must be signed by to get a core form here, so it is the trusted one
      authority: { signer: () => signer, status: () => ({ publicKey: signer.publicKey, generation: 0, rotatedAt: null, trustedPublicKeys: [signer.publicKey] }) },
      persistCoreForms: false,
      log: line => process.stderr.write(`gate receipt list: ${line}\n`),
    })
    pageOf = (cursor, limit) => engine.query({ ...query, cursor, limit }, principal)
  }
  let unverified: UnverifiedReceipt[]
  try {
    if (newest) {
      const read = await readNewest(pageOf, query.limit)
      for (const receipt of read.receipts) process.stdout.write(escapeJsonControls(receipt) + '\n')
      if (read.totalCount > read.receipts.length) process.stderr.write(`the ${read.receipts.length} newest of ${read.totalCount} matching receipts, newest first (older ones: add --until SEC)\n`)
      unverified = read.unverified
    } else {
      const page = await pageOf(query.cursor, query.limit)
      for (const receipt of page.receipts) process.stdout.write(escapeJsonControls(receipt) + '\n')
      if (page.nextCursor !== null) process.stderr.write(`next cursor: ${page.nextCursor}\n`)
      unverified = page.unverified
    }
  } finally {
    await close()
  }
  for (const u of unverified) {
    process.stderr.write(escapeControls(`receipt ${u.receiptId} (seq ${u.seq}) not verified: ${u.failedStep}: ${u.detail}; printed as stored, no core form signed`) + '\n')
  }
  return unverified.length === 0 ? 0 : 1
}

// ---- verify ----

async function verify(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { 'trusted-key': { type: 'string', multiple: true }, 'allow-untrusted': { type: 'boolean' }, proof: { type: 'string' } }, true)
  if (values.help === true) {
    process.stdout.write(VERIFY_USAGE + '\n')
    return 0
  }
  if (positionals.length !== 1) throw new UsageError('expected exactly one FILE (or - for stdin)')
  const trustedKeys = (values['trusted-key'] as string[] | undefined) ?? []
  const allowUntrusted = values['allow-untrusted'] === true
  if (allowUntrusted && trustedKeys.length > 0) throw new UsageError('--allow-untrusted and --trusted-key are mutually exclusive')
  const source = positionals[0]!
  let text: string
  try {
    text = source === '-' ? await readStdin() : await readFile(source, 'utf8')
  } catch (err) {
    throw new ConfigError(`cannot read ${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  const entries = splitReceipts(text)
  if (entries.length === 0) throw new Error(`no receipts found in ${source === '-' ? 'stdin' : source}`)
  let failures = 0
  let untrusted = 0
  for (const entry of entries) {
    let line = verifyOne(entry, trustedKeys)
    if (line.startsWith('FAIL')) failures++
    else if (trustedKeys.length === 0 && !allowUntrusted) {
      // a valid signature by a key nobody named proves nothing: an attacker signs with their own
      line = line.replace(/^ok /, 'UNTRUSTED ')
      untrusted++
    }
    process.stdout.write(escapeControls(line) + '\n')
  }
  let proofFailures = 0
  if (typeof values.proof === 'string') {
    const ids = entries.map(e => ('value' in e && typeof (e.value as { id?: unknown })?.id === 'string' ? (e.value as { id: string }).id : e.label))
    const proofs = await (await import('./receipt-proof-check.js')).checkProofFile(values.proof, ids, trustedKeys)
    for (const line of proofs.lines) process.stdout.write(escapeControls(line) + '\n')
    proofFailures = proofs.failures
  }
  const verified = entries.length - failures - untrusted
  if (untrusted > 0) {
    process.stderr.write(`${verified} of ${entries.length} receipt(s) verified; ${untrusted} with a valid signature by a signer nobody trusted: give --trusted-key KEY (or --allow-untrusted to accept any signer)\n`)
    return 1
  }
  process.stderr.write(`${verified} of ${entries.length} receipt(s) verified${trustedKeys.length === 0 ? ' (signatures only: --allow-untrusted, signers not checked)' : ''}\n`)
  return failures === 0 && proofFailures === 0 ? 0 : 1
}

type Entry = { label: string; value: unknown } | { label: string; error: string }

/** One line: `ok <id> (<form>, ...)` or `FAIL <id> <step>: <detail>`. */
export function verifyOne(entry: Entry, trustedKeys: readonly string[]): string {
  if ('error' in entry) return `FAIL ${entry.label} parse: ${entry.error}`
  const receipt = entry.value
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) return `FAIL ${entry.label} shape: not a JSON object`
  const r = receipt as Record<string, unknown>
  const id = typeof r.id === 'string' ? r.id : entry.label
  const untrusted = trustedKeys.length === 0
  if ('verdict' in r && 'request_id' in r) {
    const check = checkHttpReceipt(r, { trustedKeys })
    if (check.failedStep === null) return `ok ${id} (http receipt, signer trusted)`
    if (check.failedStep === 'signer' && untrusted) {
      if (!check.response.parameter_hash_valid) return `FAIL ${id} parameter_hash: content_hash is not a 64-character lowercase hex digest`
      return `ok ${id} (http receipt, signature valid, signer untrusted)`
    }
    return `FAIL ${id} ${check.failedStep}: ${check.detail}`
  }
  // spec 02 order: authority semantics, the recomputed content-addressed id, the signature; then signer
  const check = verifyCoreReceipt(r, { trustedKeys })
  const evidenceOnly = check.receipt_kind === 'mediated_decision' ? '' : `, ${check.receipt_kind}: evidence, not an authorization`
  if (check.failedStep === null) return `ok ${id} (core receipt, signer trusted${evidenceOnly})`
  if (check.failedStep === 'signer' && untrusted) {
    // the signer step came first: the same check with that key trusted says what is wrong with the hashes
    if (!check.parameter_hash_valid) return `FAIL ${id} parameter_hash: ${verifyCoreReceipt(r, { trustedKeys: [check.signer_key_hex] }).detail}`
    return `ok ${id} (core receipt, signature valid, signer untrusted${evidenceOnly})`
  }
  return `FAIL ${id} ${check.failedStep}: ${check.detail}`
}

/** The receipts in `text`: a query response, an array, one object, or JSON lines. */
export function splitReceipts(text: string): Entry[] {
  const trimmed = text.trim()
  if (trimmed === '') return []
  let whole: unknown
  let parsedWhole = false
  try {
    whole = parseJsonExact(trimmed)
    parsedWhole = true
  } catch {
    // not one JSON document: JSON lines
  }
  if (parsedWhole) {
    if (Array.isArray(whole)) return whole.map((value, i) => ({ label: `#${i + 1}`, value }))
    if (typeof whole === 'object' && whole !== null && Array.isArray((whole as { receipts?: unknown }).receipts)) {
      return ((whole as { receipts: unknown[] }).receipts).map((value, i) => ({ label: `#${i + 1}`, value }))
    }
    return [{ label: '#1', value: whole }]
  }
  const entries: Entry[] = []
  trimmed.split('\n').forEach((line, i) => {
    if (line.trim() === '') return
    try {
      entries.push({ label: `line-${i + 1}`, value: parseJsonExact(line) })
    } catch (err) {
      entries.push({ label: `line-${i + 1}`, error: (err as Error).message })
    }
  })
  return entries
}

// ---- shared ----

// The query parameter names in a validation message, as the CLI flags the user typed.
function flagWording(message: string): string {
  let out = message
  for (const [flag, parameter] of FILTER_PARAMETERS) out = out.replaceAll(parameter, `--${flag}`)
  return out
}

async function readSigner(path: string): Promise<Signer> {
  let text: string
  try {
    text = (await readFile(path, 'utf8')).trim().toLowerCase()
  } catch (err) {
    throw new ConfigError(`cannot read --authority-seed-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  const seed = hexToBytes(text)
  if (seed === undefined || seed.length !== 32) throw new ConfigError(`--authority-seed-file ${path} must contain 64 hex characters (an Ed25519 seed)`)
  return createSigner({ secret: seed })
}

// Without a seed no stored key matches, so rows without a core form are printed as stored.
function unmatchedSigner(): Signer {
  return createSigner({ secret: generateSecret('ed25519') })
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    process.stdin.on('data', (c: Buffer) => chunks.push(c))
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    process.stdin.on('error', reject)
  })
}
