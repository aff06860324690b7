// `gate receipt list` (spec 03, Receipt CLI): the receipt query, locally over --receipt-db or remotely
// over --control-url, one JSON receipt per line on stdout, as stored (pipes into jq) but for characters a
// terminal would act on, written as \uXXXX escapes (the same JSON value); the next cursor goes to stderr,
// and so does each receipt trust-control found not to verify (exit 1). Everything printed from a
// receipt goes through terminal-text.ts.
import { createSigner, EXACT_JSON_LIMITS, generateSecret, readJson, type Signer } from '@gate/sdk'
import { readSigner } from '../config/authority-seed.js'
import { createCorpusPort, PAGE_LIMIT, parseReceiptQuery, ReceiptQueryEngine, type Principal, type UnverifiedReceipt } from '@gate/trust'
import { GLOBAL_FLAG_OPTIONS, readGlobalFlags } from '../config/global-flags.js'
import { UsageError } from '../errors.js'
import { createControlClient, describeRefusal } from './control-client.js'
import { parseFlags } from './parse-flags.js'
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

export async function list(argv: string[]): Promise<number> {
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

// The query parameter names in a validation message, as the CLI flags the user typed.
function flagWording(message: string): string {
  let out = message
  for (const [flag, parameter] of FILTER_PARAMETERS) out = out.replaceAll(parameter, `--${flag}`)
  return out
}

// Without a seed no stored key matches, so rows without a core form are printed as stored.
function unmatchedSigner(): Signer {
  return createSigner({ secret: generateSecret('ed25519') })
}
