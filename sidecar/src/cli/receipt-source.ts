// What `gate receipt list` and `gate receipt explain` share about their source: the receipt file itself
// (--receipt-db, which a read never creates) or trust-control's /v1 routes (--control-url, chosen by
// transparency-source.ts's rule), and what to print of a route's refusal.
import { existsSync } from 'node:fs'
import { ConfigError } from '../errors.js'
import { openReceiptStore, type ReceiptStore } from '../stores/index.js'

export const SOURCE_HELP = `Receipt source (one of):
  --receipt-db PATH           read the SQLite receipt store directly
  --control-url URL           read from trust-control (gate trust serve) or a sidecar's /v1 routes
  --control-token TOKEN       bearer token for --control-url; prefer the GATE_CONTROL_TOKEN environment
                              variable (argv is visible to other local users)
  --control-token-file PATH   file holding that token (default .gate/control-token, when it exists)`

/** Opens the receipt file at `path`; it must exist (never create a store by reading one). */
export async function openExistingStore(path: string): Promise<ReceiptStore> {
  if (!existsSync(path)) throw new ConfigError(`--receipt-db ${path} does not exist`)
  return openReceiptStore(path)
}

/** The message of a /v1 error body (spec 03: `error`; Gate's: `message`), or the start of the text. */
export function errorOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown }
    return String(body.message ?? body.error ?? text)
  } catch {
    return text.slice(0, 200)
  }
}
