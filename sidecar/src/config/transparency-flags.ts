// The transparency-log flags `gate sidecar`, `gate api protect` and `gate trust serve` share
// (docs/transparency.md): when checkpoints are signed, where a copy of each goes, or no log at all.
import type { ParseArgsConfig } from 'node:util'
import { CHECKPOINTER_DEFAULTS } from '../transparency/checkpointer.js'
import { UsageError } from '../errors.js'

export const TRANSPARENCY_FLAG_OPTIONS = {
  'checkpoint-every': { type: 'string' },
  'checkpoint-interval-secs': { type: 'string' },
  'checkpoint-copy': { type: 'string' },
  'no-transparency-log': { type: 'boolean' },
} as const satisfies ParseArgsConfig['options']

export const TRANSPARENCY_FLAGS_HELP = `Transparency log (a Merkle tree over the receipts, signed checkpoints; docs/transparency.md):
  --checkpoint-every N        sign a checkpoint once N receipts were added since the last (default
                              ${CHECKPOINTER_DEFAULTS.everyReceipts}; 0: only on the timer and on request)
  --checkpoint-interval-secs T  also sign one every T seconds when the log grew (default
                              ${CHECKPOINTER_DEFAULTS.intervalMs / 1000}; 0: no timer)
  --checkpoint-copy PATH      also write each new checkpoint statement to PATH (keep it off the receipt
                              store's disk: gate receipt audit --checkpoint PATH detects a rolled-back file)
  --no-transparency-log       keep no tree and sign no checkpoints`

/** The parsed transparency flags. */
export interface TransparencySettings {
  enabled: boolean
  everyReceipts: number
  intervalMs: number
  copyPath?: string
}

export function readTransparencyFlags(values: Record<string, unknown>): TransparencySettings {
  const every = nonNegative(values['checkpoint-every'], '--checkpoint-every', CHECKPOINTER_DEFAULTS.everyReceipts)
  const seconds = nonNegative(values['checkpoint-interval-secs'], '--checkpoint-interval-secs', CHECKPOINTER_DEFAULTS.intervalMs / 1000)
  const enabled = values['no-transparency-log'] !== true
  const copyPath = typeof values['checkpoint-copy'] === 'string' ? values['checkpoint-copy'] : undefined
  if (!enabled && (copyPath !== undefined || values['checkpoint-every'] !== undefined || values['checkpoint-interval-secs'] !== undefined)) {
    throw new UsageError('--no-transparency-log cannot be combined with the --checkpoint-* flags')
  }
  return { enabled, everyReceipts: every, intervalMs: seconds * 1000, copyPath }
}

function nonNegative(value: unknown, flag: string, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || !Number.isSafeInteger(n)) throw new UsageError(`${flag} must be a non-negative integer, got "${String(value)}"`)
  return n
}
