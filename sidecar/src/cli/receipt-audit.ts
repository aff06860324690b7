// `gate receipt audit`: recomputes the receipt log's tree from the store, checks every checkpoint and
// every row (transparency/audit.ts) and reports every finding in one run, a run of rows with the same
// problem as one line. A checkpoint kept outside the file (--checkpoint, e.g. the sidecar's
// --checkpoint-copy) is what exposes a store rolled back as a whole. Exit 0 when clean, 1 on any
// finding, 2 on usage errors.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { parseJsonExact } from '@gate/sdk'
import { validate } from '@gate/schemas'
import { ConfigError, UsageError } from '../errors.js'
import { openTransparencyLogStore } from '../stores/index.js'
import type { TransparencyLogBackend } from '@gate/trust'
import { auditLog, describeFinding, type AuditReport } from '../transparency/audit.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { escapeControls, escapeJsonControls } from './terminal-text.js'

const AUDIT_USAGE = `Usage: gate receipt audit (--receipt-db PATH | --database-url URL) [--trusted-key KEY ...] [--checkpoint FILE ...] [--tree-only] [--json]

Recomputes the Merkle tree over every stored receipt in commit order and checks it against each signed
checkpoint the store holds and each one given with --checkpoint, and checks every row: its signed
receipt (and stored core form) verifies, and each filter column (outcome, capability, subject, tool or
route, time, cost, tenant, decision link) says what the signed receipt says. Reports every deleted,
altered, reordered and rolled-back row in one run, with the first bad index; consecutive rows with the
same problem print as one range. Exit 1 when anything is wrong.

Options:
  --receipt-db PATH           the SQLite receipt store
  --database-url URL          trust-control's PostgreSQL database (gate trust serve --database-url); also
                              GATE_DATABASE_URL (preferred: keeps the password out of argv). Read only
  --trusted-key KEY           a trusted authority public key (repeatable). Without any, signatures are still
                              checked and signers reported untrusted
  --checkpoint FILE           a signed checkpoint statement kept outside the store (repeatable): a
                              --checkpoint-copy file, or one saved from GET /v1/checkpoints/latest. The only
                              way to notice the whole file being rolled back to an older copy
  --tree-only                 skip the per-row checks (signed forms and columns): the tree alone
  --json                      print the report as JSON`

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes('receipt audit', AUDIT_USAGE, async () => {
    const { values } = parseFlags(argv, {
      'receipt-db': { type: 'string' },
      'database-url': { type: 'string' },
      'trusted-key': { type: 'string', multiple: true },
      checkpoint: { type: 'string', multiple: true },
      'tree-only': { type: 'boolean' },
      json: { type: 'boolean' },
    })
    if (values.help === true) {
      process.stdout.write(AUDIT_USAGE + '\n')
      return 0
    }
    const pinned = await Promise.all(((values.checkpoint as string[] | undefined) ?? []).map(readStatement))
    const { backend, close } = await openBackend(values['receipt-db'] as string | undefined, values['database-url'] as string | undefined)
    let report: AuditReport
    try {
      report = await auditLog({ backend, trustedKeys: (values['trusted-key'] as string[] | undefined) ?? [], pinned, treeOnly: values['tree-only'] === true })
    } finally {
      await close()
    }
    // details quote stored columns and ids: never a control character to the terminal
    process.stdout.write(values.json === true ? escapeJsonControls(JSON.stringify(report)) + '\n' : describe(report))
    return report.ok ? 0 : 1
  })
}

// Both backends are audited by the same code: only where the rows are read from differs.
async function openBackend(path: string | undefined, flagUrl: string | undefined): Promise<{ backend: TransparencyLogBackend; close: () => Promise<void> }> {
  const envUrl = process.env.GATE_DATABASE_URL
  const url = flagUrl ?? (envUrl === '' ? undefined : envUrl)
  if (path !== undefined && url !== undefined) throw new UsageError('--receipt-db and --database-url are mutually exclusive (GATE_DATABASE_URL counts as --database-url)')
  if (path === undefined && url === undefined) throw new UsageError('--receipt-db PATH or --database-url URL is required')
  if (path !== undefined) {
    if (!existsSync(path)) throw new ConfigError(`--receipt-db ${path} does not exist`)
    const backend = await openTransparencyLogStore(path)
    return { backend, close: () => backend.close() }
  }
  // loaded only here: auditing a file needs no PostgreSQL driver
  const { checkDatabaseUrl, PgDatabase, PgTransparencyLogStore } = await import('@gate/trust/postgres')
  try {
    checkDatabaseUrl(url, '--database-url')
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  // the audit only reads: no migration, one connection
  const db = new PgDatabase({ url: url!, poolSize: 1, applicationName: 'gate receipt audit' })
  // the store's close leaves the pool to its owner: here, this command
  return { backend: new PgTransparencyLogStore(db), close: () => db.close() }
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
    ...(report.receiptChecks === 'skipped' ? ['warning: --tree-only: receipt ids, signatures and columns were not checked'] : []),
    ...(report.firstBadIndex === null ? [] : [`first bad index: ${report.firstBadIndex}`]),
    ...report.findings.map(f => `  ${describeFinding(f)}`),
  ]
  // one line each: a line break inside a detail would forge a line of the report
  return lines.map(line => escapeControls(line)).join('\n') + '\n'
}
