// `gate receipt proof|health|flush|checkpoint` (spec 03, Receipt CLI; docs/transparency.md): the
// transparency log, over --receipt-db or --control-url. Each prints JSON with --json.
//   proof ID             the receipt's inclusion proof (gate.transparency.inclusion-proof.v2), always JSON
//   health               store reachable, last commit, tree size, last checkpoint, lag; exit 1 if unhealthy
//   flush                commit and checkpoint everything written, within --timeout-ms
//   checkpoint status    the newest checkpoint and what it leaves uncovered
//   checkpoint create    sign a checkpoint of the whole log now (local: --authority-seed-file)
import { canonicalJson, type CheckpointStatement } from '@gate/sdk'
import type { TransparencyStatus } from '@gate/trust'
import { UsageError } from '../errors.js'
import { GLOBAL_FLAG_OPTIONS, readGlobalFlags, type GlobalFlags } from '../config/global-flags.js'
import { createControlClient } from './control-client.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { chooseLogSource, withLocalLog } from './transparency-source.js'

const SOURCE = `Source (one of):
  --receipt-db PATH           the SQLite receipt store (a running sidecar may hold it too)
  --control-url URL           a sidecar's or trust-control's /v1 routes (admin control token:
                              --control-token or GATE_CONTROL_TOKEN)
  --json                      print JSON`

const PROOF_USAGE = `Usage: gate receipt proof ID (--receipt-db PATH | --control-url URL) [--tree-size N]

Prints the receipt's inclusion proof (gate.transparency.inclusion-proof.v2) as JSON: its leaf index, the
audit path and the signed checkpoint it leads to. Check it offline with
gate receipt verify RECEIPT --proof FILE --trusted-key KEY.

  --tree-size N               prove against the checkpoint of this tree size (default: the newest)
${SOURCE}`

const HEALTH_USAGE = `Usage: gate receipt health (--receipt-db PATH | --control-url URL) [--json]

Store reachable, last commit, tree size, last checkpoint, receipts not yet in the tree or not yet
checkpointed. Exit 1 when unhealthy. (A fleet sidecar's outbox lag is in its /gate/health.)

${SOURCE}`

const FLUSH_USAGE = `Usage: gate receipt flush (--receipt-db PATH --authority-seed-file PATH | --control-url URL) [--timeout-ms N] [--json]

Makes everything written durable and checkpointed: commits what the writer holds, adds every committed
receipt to the tree and signs a checkpoint unless the newest already covers them all. Exit 1 on timeout.

  --timeout-ms N              give up after N ms (default 5000)
  --authority-seed-file PATH  local mode: the authority key that signs checkpoints
${SOURCE}`

const CHECKPOINT_USAGE = `Usage: gate receipt checkpoint status (--receipt-db PATH | --control-url URL) [--json]
       gate receipt checkpoint create (--receipt-db PATH --authority-seed-file PATH | --control-url URL) [--json]

status prints the newest signed checkpoint and how many receipts it leaves uncovered; create adds every
committed receipt to the tree and signs a checkpoint of it (unless the newest already covers them).

${SOURCE}`

const FLAGS = { ...GLOBAL_FLAG_OPTIONS, json: { type: 'boolean' } } as const

/** The transparency subcommands of `gate receipt`, by verb (receipt.ts dispatches to them). */
export const TRANSPARENCY_COMMANDS: Readonly<Record<string, (argv: string[]) => Promise<number>>> = Object.freeze({
  proof: (argv: string[]) => proof(argv),
  health: (argv: string[]) => health(argv),
  flush: (argv: string[]) => flush(argv),
  checkpoint: (argv: string[]) => checkpoint(argv),
  audit: async (argv: string[]) => (await import('./receipt-audit.js')).run(argv),
})
const DEFAULT_TIMEOUT_MS = 5000

export async function proof(argv: string[]): Promise<number> {
  return runWithExitCodes('receipt proof', PROOF_USAGE, async () => {
    const { values, positionals } = parseFlags(argv, { ...FLAGS, 'tree-size': { type: 'string' } }, true)
    if (values.help === true) return help(PROOF_USAGE)
    if (positionals.length !== 1) throw new UsageError('expected exactly one receipt ID')
    const id = positionals[0]!
    if (!/^[0-9a-f]{64}$/.test(id)) throw new UsageError(`a receipt ID is 64 lowercase hex characters, got "${id}"`)
    const treeSize = values['tree-size'] === undefined ? undefined : count(values['tree-size'], '--tree-size')
    const global = readGlobalFlags(values)
    const record =
      chooseLogSource(global) === 'remote'
        ? await createControlClient(global).get(`/v1/receipts/${id}/proof${treeSize === undefined ? '' : `?treeSize=${treeSize}`}`)
        : await withLocalLog(global, log => log.inclusionProof(id, treeSize))
    process.stdout.write(canonicalJson(record) + '\n')
    return 0
  })
}

export async function health(argv: string[]): Promise<number> {
  return runWithExitCodes('receipt health', HEALTH_USAGE, async () => {
    const { values } = parseFlags(argv, FLAGS)
    if (values.help === true) return help(HEALTH_USAGE)
    const status = await readStatus(readGlobalFlags(values))
    const healthy = status.store.reachable && status.store.healthy && status.lastError === null
    print(values.json === true, { healthy, ...status }, () => [
      `store:           ${status.store.location}, ${status.store.reachable ? 'reachable' : 'unreachable'}, ${status.store.healthy ? 'healthy' : 'UNHEALTHY (last commit failed)'}`,
      `last commit:     ${status.lastCommit === null ? 'none' : `seq ${status.lastCommit.seq} at ${iso(status.lastCommit.timestamp)}`}`,
      `tree size:       ${status.treeSize} (${status.pendingLeaves} committed receipt(s) not in the tree yet)`,
      `last checkpoint: ${describeCheckpoint(status)}`,
      ...(status.lastError === null ? [] : [`checkpointer:    FAILING: ${status.lastError}`]),
    ])
    return healthy ? 0 : 1
  })
}

export async function flush(argv: string[]): Promise<number> {
  return runWithExitCodes('receipt flush', FLUSH_USAGE, async () => {
    const { values } = parseFlags(argv, { ...FLAGS, 'timeout-ms': { type: 'string' } })
    if (values.help === true) return help(FLUSH_USAGE)
    const timeoutMs = values['timeout-ms'] === undefined ? DEFAULT_TIMEOUT_MS : count(values['timeout-ms'], '--timeout-ms', 1)
    return report(values.json === true, await checkpointNow(readGlobalFlags(values), timeoutMs))
  })
}

export async function checkpoint(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv
  return runWithExitCodes(`receipt checkpoint ${verb ?? ''}`.trim(), CHECKPOINT_USAGE, async () => {
    if (verb === '--help' || verb === '-h' || verb === 'help') return help(CHECKPOINT_USAGE)
    if (verb !== 'status' && verb !== 'create') throw new UsageError(verb === undefined ? 'expected status or create' : `unknown subcommand "${verb}"`)
    const { values } = parseFlags(rest, FLAGS)
    if (values.help === true) return help(CHECKPOINT_USAGE)
    const global = readGlobalFlags(values)
    if (verb === 'create') return report(values.json === true, await checkpointNow(global, DEFAULT_TIMEOUT_MS))
    const status = await readStatus(global)
    print(values.json === true, { lastCheckpoint: status.lastCheckpoint, checkpointCount: status.checkpointCount, treeSize: status.treeSize, uncheckpointedReceipts: status.uncheckpointedReceipts, logId: status.logId }, () => [
      `last checkpoint: ${describeCheckpoint(status)}`,
      `checkpoints:     ${status.checkpointCount} in log ${status.logId}`,
    ])
    return 0
  })
}

async function readStatus(global: GlobalFlags): Promise<TransparencyStatus> {
  if (chooseLogSource(global) === 'remote') return (await createControlClient(global).get('/v1/checkpoints/status')) as TransparencyStatus
  return withLocalLog(global, log => log.status())
}

async function checkpointNow(global: GlobalFlags, timeoutMs: number): Promise<{ checkpoint: CheckpointStatement | null; created: boolean }> {
  if (chooseLogSource(global) === 'remote') {
    return (await createControlClient(global, { headersTimeoutMs: timeoutMs + 5000 }).post(`/v1/checkpoints?timeoutMs=${timeoutMs}`, {})) as { checkpoint: CheckpointStatement | null; created: boolean }
  }
  const result = await withLocalLog(global, log => log.flush(timeoutMs))
  return { checkpoint: result.checkpoint ?? null, created: result.created }
}

function report(json: boolean, result: { checkpoint: CheckpointStatement | null; created: boolean }): number {
  const c = result.checkpoint
  print(json, result, () => [
    c === null ? 'no receipts, no checkpoint' : `${result.created ? 'signed checkpoint' : 'already checkpointed:'} tree size ${c.tree_size}, root ${c.root_hash}, at ${iso(c.timestamp)}, signer ${c.signer_key}`,
  ])
  return 0
}

function describeCheckpoint(status: TransparencyStatus): string {
  const c = status.lastCheckpoint
  if (c === null) return `none yet (${status.uncheckpointedReceipts} receipt(s) uncovered)`
  return `tree size ${c.treeSize}, root ${c.rootHash}, at ${iso(c.timestamp)} (${status.uncheckpointedReceipts} receipt(s) committed since)`
}

function print(json: boolean, value: unknown, lines: () => string[]): void {
  process.stdout.write(json ? JSON.stringify(value) + '\n' : lines().join('\n') + '\n')
}

function help(usage: string): number {
  process.stdout.write(usage + '\n')
  return 0
}

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString()
}

function count(value: unknown, flag: string, min = 0): number {
  const n = Number(value)
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be an integer >= ${min}, got "${String(value)}"`)
  return n
}
