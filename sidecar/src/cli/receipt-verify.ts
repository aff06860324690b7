// `gate receipt verify` (spec 03, Receipt CLI): offline verification of HTTP or core receipts (JSON
// lines, an array, one object, or a query response), one line per receipt: ok, or the failing step;
// exit 1 if any fails, or if no --trusted-key was given (unless --allow-untrusted): a valid signature by
// an unknown key proves nothing. With --proof, every receipt must be shown included in a signed
// checkpoint (receipt-proof-check.ts). Everything printed from a receipt goes through terminal-text.ts.
import { readFile } from 'node:fs/promises'
import { checkHttpReceipt, parseJsonExact, verifyCoreReceipt } from '@gate/sdk'
import { readPublicKeyFlags } from '../config/public-key-flag.js'
import { ConfigError, UsageError } from '../errors.js'
import { parseFlags } from './parse-flags.js'
import { escapeControls } from './terminal-text.js'

export const VERIFY_USAGE = `Usage: gate receipt verify FILE|- (--trusted-key KEY ... | --allow-untrusted) [--proof FILE]

Verifies receipts offline, each step in spec 02's order: HTTP receipts (semantics, id, signature,
signer, content hash) and core receipts (kind coherence, the content-addressed id, the signature over
{id, body}, signer, content hash form). Input: JSON lines (as printed
by gate receipt list), a JSON array, one receipt object, or a receipt query response. Prints one line
per receipt, "ok ...", "UNTRUSTED ..." or "FAIL <id> <step>: <why>", and exits 1 if any fails or
is untrusted.

Options:
  --trusted-key KEY           a trusted signer public key (repeatable) in its wire form, as kernel_key
                              writes it: 64 hex (Ed25519), p256:04…, p384:04… or hybrid:…; the kernel_key
                              from GET /gate/live, or the authority's trustedPublicKeys
  --allow-untrusted           without --trusted-key, accept a valid signature by any key: each receipt is
                              reported "ok ... signer untrusted" and the exit code is 0. Without this
                              flag such receipts are UNTRUSTED and the exit code is 1 (anyone can sign a
                              receipt with a key of their own)
  --proof FILE                inclusion proofs (gate receipt proof ID) of the receipts, and optionally
                              consistency proofs, checked against the same --trusted-key: every receipt must
                              be shown included in a signed checkpoint`

export async function verify(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { 'trusted-key': { type: 'string', multiple: true }, 'allow-untrusted': { type: 'boolean' }, proof: { type: 'string' } }, true)
  if (values.help === true) {
    process.stdout.write(VERIFY_USAGE + '\n')
    return 0
  }
  if (positionals.length !== 1) throw new UsageError('expected exactly one FILE (or - for stdin)')
  const trustedKeys = readPublicKeyFlags('--trusted-key', values['trusted-key'] as string[] | undefined)
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
function verifyOne(entry: Entry, trustedKeys: readonly string[]): string {
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
function splitReceipts(text: string): Entry[] {
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

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    process.stdin.on('data', (c: Buffer) => chunks.push(c))
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    process.stdin.on('error', reject)
  })
}
