// Where each store lives. One flag names the receipt store (`--receipt-store /x/receipts.db`); the
// other five sit beside it (`/x/receipts.revocations.db`, …) unless given their own path
// (`--revocation-db`, `--budget-db`, `--approval-db`, `--nonce-db`, `--authority-db`).
import { basename, dirname, extname, join } from 'node:path'

/** The seven stores, in the order they are opened. */
export const STORE_NAMES = Object.freeze(['receipts', 'revocations', 'budgets', 'approvals', 'nonces', 'authority', 'capabilities'] as const)

/** The stores beside the receipt store; the hosted MCP edge adds its session store (edge-session-store.ts). */
export type StoreName = (typeof STORE_NAMES)[number] | 'edge_sessions'

/** One path per store of STORE_NAMES; `:memory:` for an ephemeral one. */
export type StorePaths = Readonly<Record<(typeof STORE_NAMES)[number], string>>

const MEMORY_PATH = ':memory:'

/**
 * True when `path` names no durable file: empty, `:memory:`, `file::memory:…`, or a `file:` URI with
 * `mode=memory`. Such a receipt path means "no durable store" (the sidecar reports `ephemeral`).
 */
export function isInMemoryPath(path: string | undefined | null): boolean {
  if (path === undefined || path === null) return true
  const trimmed = path.trim()
  if (trimmed === '' || trimmed === MEMORY_PATH) return true
  if (!trimmed.startsWith('file:')) return false
  if (trimmed.startsWith('file::memory:')) return true
  const query = trimmed.indexOf('?')
  return query !== -1 && new URLSearchParams(trimmed.slice(query + 1)).get('mode') === 'memory'
}

/**
 * Derives the sibling store paths of a receipt store: `/x/receipts.db` gives `/x/receipts.budgets.db`
 * (the receipt file's extension is kept; none gives `.db`). Explicit paths win. An in-memory receipt
 * path makes every store without an explicit path in-memory too.
 */
export function deriveStorePaths(receiptPath: string, explicit: Partial<Record<StoreName, string>> = {}): StorePaths {
  const paths = {} as Record<(typeof STORE_NAMES)[number], string>
  const ephemeral = isInMemoryPath(receiptPath)
  const ext = ephemeral ? '' : extname(receiptPath)
  const stem = ephemeral ? '' : join(dirname(receiptPath), basename(receiptPath, ext))
  for (const name of STORE_NAMES) {
    const given = explicit[name]
    if (given !== undefined && given !== '') paths[name] = given
    else if (name === 'receipts') paths[name] = ephemeral ? MEMORY_PATH : receiptPath
    else paths[name] = ephemeral ? MEMORY_PATH : `${stem}.${name}${ext === '' ? '.db' : ext}`
  }
  return Object.freeze(paths)
}
