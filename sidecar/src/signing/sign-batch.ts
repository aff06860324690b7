// The messages between the sidecar and its signing thread.
import type { CoreFormResult } from '@gate/trust'

/** Receipt texts to sign, joined by U+0000 (one string clones faster than an array). */
export interface SignBatch {
  id: number
  texts: string
}

/** Stored HttpReceipts to convert to their core form (the core-receipt backfill). */
export interface CoreBatch {
  id: number
  httpJsons: string[]
}

/** Separates the texts of a SignBatch; canonical JSON never holds it raw (control characters are escaped). */
export const BATCH_SEPARATOR = '\u0000'

/** The signing thread's answer: signatures in order joined by commas, core forms in order, or a failure. */
export type BatchResult = { id: number; signatures: string } | { id: number; cores: CoreFormResult[] } | { id: number; error: string }
