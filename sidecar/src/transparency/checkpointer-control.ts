// What the transparency log (transparency-log.ts) needs of its checkpointer, wherever it runs: the
// Checkpointer itself on the event loop, or one hosted on the receipt writer thread
// (stores/hosted-checkpointer.ts), reached by messages.
import type { StoredReceiptStep } from '@gate/trust'
import type { CheckpointResult } from './checkpointer.js'
import type { AcceptedSigners } from './leaf-check.js'

export interface CheckpointerControl {
  /** The last failure of a background pass, cleared by the next success. */
  readonly lastError: Error | undefined
  /** Commits what the writer holds, then catches up and checkpoints, within `timeoutMs`. */
  flush(timeoutMs: number): Promise<CheckpointResult>
  /** Stops the timers and waits for a pass in progress. */
  stop(): Promise<void>
}

/** What a checkpointer hosted elsewhere is started with (the settings of `Checkpointer` that travel). */
export interface HostedCheckpointerSettings {
  everyReceipts: number
  intervalMs: number
  copyPath?: string
  pollIntervalMs?: number
}

/** What a checkpointer asks of its process about rows another process committed (leaf-check.ts). */
export interface LeafHooks {
  acceptedSigners: AcceptedSigners
  /** Called once per row refused as a leaf because it does not verify (the metric). */
  onUnverified?: (step: StoredReceiptStep) => void
}
