// The messages between the sidecar and its signing thread.

/** One batch sent to the signing thread: the texts joined by U+0000 (one string clones faster than an array). */
export interface SignBatch {
  id: number
  texts: string
}

/** Separates the texts of a batch; canonical JSON never holds it raw (control characters are escaped). */
export const BATCH_SEPARATOR = '\u0000'

/** The signing thread's answer to a batch: the signatures in order, joined by commas. */
export type SignBatchResult = { id: number; signatures: string } | { id: number; error: string }
