// `gate receipt verify --proof FILE`: checks transparency proofs offline beside the receipts. Each
// inclusion proof must be for a receipt in the input and lead to a checkpoint signed by a --trusted-key
// (without one, the statement's signature is still checked and its signer reported untrusted, as for
// receipts); each consistency proof must link two such checkpoints. Every receipt in the input needs a
// proof. One line per proof and per unproven receipt, "ok ..." or "FAIL <id> proof: <why>"; a receipt
// whose proof failed is reported by that failure only, never as missing too.
import { readFile } from 'node:fs/promises'
import { parseJsonExact, verifyConsistencyProofRecord, verifyInclusionProofRecord, INCLUSION_PROOF_SCHEMA, CONSISTENCY_PROOF_SCHEMA } from '@gate/sdk'
import { validate } from '@gate/schemas'
import { ConfigError } from '../errors.js'

/** Lines to print and how many failed. */
export async function checkProofFile(file: string, receiptIds: readonly string[], trustedKeys: readonly string[]): Promise<{ lines: string[]; failures: number }> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new ConfigError(`cannot read --proof ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  const records = splitRecords(text)
  if (records.length === 0) throw new ConfigError(`no proofs found in --proof ${file}`)
  const untrusted = trustedKeys.length === 0
  const options = { trustedKeys, allowUntrusted: untrusted }
  const signer = (trusted: boolean) => (trusted ? 'checkpoint signer trusted' : 'checkpoint signature valid, signer untrusted')
  const wanted = new Set(receiptIds)
  const proven = new Set<string>()
  // receipts whose proof was given and failed: their failure is the line, not "missing"
  const failed = new Set<string>()
  const lines: string[] = []
  let failures = 0
  for (const [i, record] of records.entries()) {
    const r = (typeof record === 'object' && record !== null ? record : {}) as Record<string, unknown>
    const label = typeof r.receipt_id === 'string' ? r.receipt_id : `proof #${i + 1}`
    // the schema first, so a malformed record is named by its JSON pointer
    const shape = r.schema === CONSISTENCY_PROOF_SCHEMA || r.schema === INCLUSION_PROOF_SCHEMA ? validate(r.schema, record) : { ok: true as const }
    if (!shape.ok) {
      failures++
      failed.add(label)
      lines.push(`FAIL ${label} proof malformed: ${shape.errors[0]}`)
      continue
    }
    if (r.schema === CONSISTENCY_PROOF_SCHEMA) {
      const check = verifyConsistencyProofRecord(record, options)
      const sizes = `${String((r.first as { tree_size?: unknown } | undefined)?.tree_size)} -> ${String((r.second as { tree_size?: unknown } | undefined)?.tree_size)}`
      if (check.ok) lines.push(`ok consistency ${sizes} (${signer(check.signerTrusted)})`)
      else {
        failures++
        lines.push(`FAIL consistency ${sizes} proof ${check.step}: ${check.reason}`)
      }
      continue
    }
    if (r.schema !== INCLUSION_PROOF_SCHEMA) {
      failures++
      lines.push(`FAIL ${label} proof unknown_schema: ${JSON.stringify(r.schema)} is not an inclusion or consistency proof`)
      continue
    }
    const check = verifyInclusionProofRecord(record, options)
    if (!check.ok) {
      failures++
      failed.add(label)
      lines.push(`FAIL ${label} proof ${check.step}: ${check.reason}`)
      continue
    }
    if (!wanted.has(label)) {
      failures++
      lines.push(`FAIL ${label} proof receipt: the proof is for a receipt that is not in the input`)
      continue
    }
    proven.add(label)
    lines.push(`ok ${label} included at leaf ${String(r.leaf_index)} of checkpoint tree size ${String(r.tree_size)} (${signer(check.signerTrusted)})`)
  }
  for (const id of wanted) {
    if (proven.has(id) || failed.has(id)) continue
    failures++
    lines.push(`FAIL ${id} proof missing: no inclusion proof for this receipt in ${file}`)
  }
  return { lines, failures }
}

// one record, an array, or JSON lines
function splitRecords(text: string): unknown[] {
  const trimmed = text.trim()
  if (trimmed === '') return []
  try {
    const whole = parseJsonExact(trimmed)
    return Array.isArray(whole) ? whole : [whole]
  } catch {
    return trimmed
      .split('\n')
      .filter(line => line.trim() !== '')
      .map(line => {
        try {
          return parseJsonExact(line)
        } catch {
          return { schema: 'unparseable line' }
        }
      })
  }
}
