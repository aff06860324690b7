// `gate receipt audit`: recomputes the receipt log's tree from the store and checks every checkpoint
// (transparency/audit.ts). A checkpoint kept outside the file (--checkpoint, e.g. the sidecar's
// --checkpoint-copy) is what exposes a store rolled back as a whole. Exit 0 when clean, 1 with the first
// bad index named, 2 on usage errors.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { parseJsonExact } from '@gate/sdk'
import { validate } from '@gate/schemas'
import { ConfigError, UsageError } from '../errors.js'
import { openTransparencyLogStore } from '../stores/index.js'
import { auditLog, type AuditReport } from '../transparency/audit.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'

export const AUDIT_USAGE = `Usage: gate receipt audit --receipt-db PATH [--trusted-key KEY ...] [--checkpoint FILE ...] [--tree-only] [--json]

Recomputes the Merkle tree over every stored receipt in commit order and checks it against each signed
checkpoint the store holds and each one given with --checkpoint. Reports deleted, altered, reordered and
rolled-back rows with the first bad index; exit 1 when anything is wrong.

Options:
  --receipt-db PATH           the SQLite receipt store
  --trusted-key KEY           a trusted authority public key (repeatable). Without any, signatures are still
                              checked and signers reported untrusted
  --checkpoint FILE           a signed checkpoint statement kept outside the store (repeatable): a
                              --checkpoint-copy file, or one saved from GET /v1/checkpoints/latest. The only
                              way to notice the whole file being rolled back to an older copy
  --tree-only                 skip the per-receipt id and signature checks (the tree alone)
  --json                      print the report as JSON`

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes('receipt audit', AUDIT_USAGE, async () => {
    const { values } = parseFlags(argv, {
      'receipt-db': { type: 'string' },
      'trusted-key': { type: 'string', multiple: true },
      checkpoint: { type: 'string', multiple: true },
      'tree-only': { type: 'boolean' },
      json: { type: 'boolean' },
    })
    if (values.help === true) {
      process.stdout.write(AUDIT_USAGE + '\n')
      return 0
    }
    const path = values['receipt-db'] as string | undefined
    if (path === undefined) throw new UsageError('--receipt-db PATH is required')
    if (!existsSync(path)) throw new ConfigError(`--receipt-db ${path} does not exist`)
    const pinned = await Promise.all(((values.checkpoint as string[] | undefined) ?? []).map(readStatement))
    const backend = await openTransparencyLogStore(path)
    let report: AuditReport
    try {
      report = await auditLog({ backend, trustedKeys: (values['trusted-key'] as string[] | undefined) ?? [], pinned, treeOnly: values['tree-only'] === true })
    } finally {
      await backend.close()
    }
    process.stdout.write(values.json === true ? JSON.stringify(report) + '\n' : describe(report))
    return report.ok ? 0 : 1
  })
}

async function readStatement(file: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new ConfigError(`cannot read --checkpoint ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  let statement: unknown
  try {
    statement = parseJsonExact(text.trim())
  } catch (err) {
    throw new ConfigError(`--checkpoint ${file} is not JSON: ${(err as Error).message}`, err)
  }
  const shape = validate('gate.checkpoint_statement.v2', statement)
  if (!shape.ok) throw new ConfigError(`--checkpoint ${file} is not a gate.checkpoint_statement.v2: ${shape.errors[0]}`)
  return statement
}

function describe(report: AuditReport): string {
  const lines = [
    `${report.ok ? 'ok' : 'FAIL'}: ${report.receipts} receipt(s), tree size ${report.treeSize}, ${report.checkpoints.stored} stored and ${report.checkpoints.pinned} pinned checkpoint(s), ${report.checkpoints.matched} root(s) matched`,
    ...(report.signersTrusted ? [] : ['warning: no --trusted-key given: signatures were checked, signers were not']),
    ...(report.receiptChecks === 'skipped' ? ['warning: --tree-only: receipt ids and signatures were not checked'] : []),
    ...(report.firstBadIndex === null ? [] : [`first bad index: ${report.firstBadIndex}`]),
    ...report.findings.map(f => `  ${f.kind}${f.index === null ? '' : ` at index ${f.index}`}: ${f.detail}`),
  ]
  return lines.join('\n') + '\n'
}
