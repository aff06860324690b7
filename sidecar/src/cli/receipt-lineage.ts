// `gate receipt explain --lineage ID`: the receipt DAG (spec 03, "Receipt DAG") of the chain receipt ID
// is on, as a tree: read from the receipt file (--receipt-db: its core receipts and child receipts) or
// from trust-control (--control-url, GET /v1/receipts/chain), and verified here either way (each
// receipt's id and signature, then the DAG's rules: @gate/trust checkChain); the signer is not checked
// here (`gate receipt verify --trusted-key`). Exit 1 when the lineage does not verify.
import { canonicalJson, readJson, sha256Hex, EXACT_JSON_LIMITS } from '@gate/sdk'
import { checkChain, chainIdOf, loadChain, type ChainMember, type ChainView } from '@gate/trust'
import type { GlobalFlags } from '../config/global-flags.js'
import { createControlClient, describeRefusal } from './control-client.js'
import { errorOf, openExistingStore } from './receipt-source.js'
import { escapeControls } from './terminal-text.js'
import { chooseLogSource } from './transparency-source.js'

// the most receipts of each kind read from one chain (the route's own maximum)
const CHAIN_LIMIT = 1000

/** The body of GET /v1/receipts/chain (docs/trust-control.md). */
interface ChainBody {
  chainId: string
  truncated: boolean
  receipts: Record<string, unknown>[]
  children: Record<string, unknown>[]
}

/** Prints the lineage of receipt `id`; the exit code. */
export async function explainLineage(id: string, global: GlobalFlags): Promise<number> {
  const view = chooseLogSource(global) === 'remote' ? await readRemote(id, global) : await readLocal(id, global.receiptDb!)
  process.stdout.write(describeLineage(view, id))
  return view.verified ? 0 : 1
}

async function readRemote(id: string, global: GlobalFlags): Promise<ChainView> {
  const path = `/v1/receipts/chain?receiptId=${id}&limit=${CHAIN_LIMIT}`
  const { status, text } = await createControlClient(global).getText(path)
  if (status === 404) throw new Error(`receipt ${id} not found, or on no chain`)
  if (status !== 200) throw new Error(describeRefusal(`GET ${path}`, status, errorOf(text)))
  const body = readJson(text, EXACT_JSON_LIMITS).value as ChainBody
  // the served receipts are checked here, not taken on the server's word
  const members: ChainMember[] = [
    ...body.receipts.map((receipt, seq): ChainMember => ({ receiptId: String(receipt.id), kind: 'core', seq, json: '', receipt })),
    // a child appended without an id is served as sent: its id is the hash of its canonical form
    ...body.children.map((receipt, seq): ChainMember => ({ receiptId: typeof receipt.id === 'string' ? receipt.id : sha256Hex(canonicalJson(receipt)), kind: 'child', seq, json: '', receipt })),
  ]
  return checkChain(body.chainId, members, body.truncated ? CHAIN_LIMIT : undefined)
}

async function readLocal(id: string, path: string): Promise<ChainView> {
  const store = await openExistingStore(path)
  try {
    const sources = { corpus: store.query, listed: store.listed }
    const chainId = await chainIdOf(sources, id)
    if (chainId === undefined) throw new Error(`receipt ${id} not found in ${path}, or on no chain`)
    return await loadChain(sources, chainId, CHAIN_LIMIT)
  } finally {
    await store.close()
  }
}

/** A chain as a tree: each receipt under the receipts it follows from, `*` marking `asked`. */
export function describeLineage(view: ChainView, asked: string): string {
  const byId = new Map(view.members.map(m => [m.receiptId, m]))
  const childrenOf = new Map<string, ChainMember[]>()
  const roots: ChainMember[] = []
  for (const m of view.members) {
    const parents = (Array.isArray(m.receipt.parentReceiptIds) ? m.receipt.parentReceiptIds : []).filter((p): p is string => typeof p === 'string' && byId.has(p))
    if (parents.length === 0) roots.push(m)
    for (const p of parents) childrenOf.set(p, [...(childrenOf.get(p) ?? []), m])
  }
  const lines = [`chain ${view.chainId}: ${view.members.length} receipts, ${view.verified ? 'lineage verifies (ids, signatures, parent sets, chains, ordinals; signer not checked here)' : 'lineage NOT verified'}`]
  for (const p of view.problems) lines.push(`  problem: ${p.receiptId === '' ? '' : `${p.receiptId.slice(0, 16)}: `}${p.step}: ${p.detail}`)
  const shown = new Set<string>()
  // a receipt with several parents is drawn in full under the first, and named under the others
  const draw = (m: ChainMember, depth: number) => {
    const again = shown.has(m.receiptId)
    lines.push(`${'  '.repeat(depth + 1)}${m.receiptId === asked ? '*' : '-'} ${summaryOf(m)}${again ? ' (shown above)' : ''}`)
    if (again) return
    shown.add(m.receiptId)
    for (const c of childrenOf.get(m.receiptId) ?? []) draw(c, depth + 1)
  }
  for (const r of roots) draw(r, 0)
  // every receipt came from a store or a server: one line each, whatever it holds
  return lines.map(escapeControls).join('\n') + '\n'
}

function summaryOf(m: ChainMember): string {
  const r = m.receipt
  const head = `#${String(r.dagOrdinal)} ${m.receiptId}`
  if (m.kind === 'child') return `${head} child ${String(r.operation_kind)} ${String(r.terminal_state)}`
  const decision = r.decision as { verdict?: unknown } | undefined
  const final = typeof (r.metadata as Record<string, unknown> | undefined)?.gate_decision_receipt_id === 'string'
  return `${head} ${final ? 'final' : 'decision'} ${String(decision?.verdict)} ${String(r.tool_server)}/${String(r.tool_name)}`
}
