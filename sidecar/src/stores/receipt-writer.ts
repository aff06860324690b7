// The one way a receipt is written: `ReceiptWriter.write` signs a receipt body with the authority key,
// appends it to the receipt log and resolves once its row is committed, so whoever answers with the
// receipt answers only with a durable one. The kernel (evaluate, finalize, events, tool calls), the
// proxy through the kernel, and trust-control's revocations write through it. `write` takes an
// HttpReceipt body; `writeCore` a core receipt body (`gate.receipt.v1`: a tool call's receipt, which has
// no HTTP form), stored in the same log in the same commits.
//
// Two implementations, chosen once at startup: inline (sign on the calling thread, then the log's group
// commit) and threaded (threaded-receipt-writer.ts: one thread signs, inserts and commits whole batches,
// which halves the event loop's CPU per receipt under load; docs/architecture.md).
import { signCoreReceiptJson, signHttpReceiptJson, type CoreReceipt, type CoreReceiptBody, type HttpReceipt, type HttpReceiptBody, type Signer } from '@gate/sdk'
import type { CheckpointerControl, HostedCheckpointerSettings, LeafHooks } from '../transparency/checkpointer-control.js'
import { createCoreReceiptRow, createReceiptRow, type CommittedReceipts, type CoreReceiptRowContext, type ReceiptRowContext } from '@gate/trust'
import type { ReceiptLog } from './receipt-log.js'
import { bindCoreReceiptContext, bindReceiptContext } from './receipt-columns.js'

/** What the writer is told beyond the receipt body (the row's columns a receipt does not carry). */
export type ReceiptWriteContext = Omit<ReceiptRowContext, 'coreJson'>

/** What the writer is told beyond a core receipt body: the row's columns, the request id among them. */
export type CoreReceiptWriteContext = CoreReceiptRowContext

/** A core receipt body to sign: every field but `id`, `kernel_key` and `algorithm` (the signer's). */
export type CoreReceiptDraft = Omit<CoreReceiptBody, 'id' | 'kernel_key' | 'algorithm'>

/** A core receipt signed and committed. */
export interface WrittenCoreReceipt {
  receipt: CoreReceipt
  /** The receipt exactly as stored and served (canonical JSON). */
  json: string
  seq: number
}

/** A receipt signed and committed. */
export interface WrittenReceipt {
  receipt: HttpReceipt
  /** The receipt exactly as stored and served. */
  json: string
  seq: number
}

/** Writes signed receipts durably; every receipt of the process goes through one. */
export interface ReceiptWriter {
  /**
   * Signs `body` and appends it; resolves after the commit. Rejects with gate_receipt_sign_failed when
   * it cannot be signed and gate_receipt_persistence_failed when it cannot be committed.
   */
  write(body: HttpReceiptBody, context?: ReceiptWriteContext): Promise<WrittenReceipt>
  /** `write` for a core receipt body (same failures): signed as `gate.receipt.v1`, stored without an HTTP form. */
  writeCore(body: CoreReceiptDraft, context: CoreReceiptWriteContext): Promise<WrittenCoreReceipt>
  /**
   * Calls `follower` after each commit of receipts (see `ReceiptLog.onCommitted`); returns an unsubscribe.
   * The threaded writer reports its thread's commits when their answer arrives, so one may be reported
   * after a later inline commit: followers go by the seqs, never by the order of the calls.
   */
  onCommitted(follower: (batch: CommittedReceipts) => void): () => void
  /** Resolves once every receipt written so far is committed (`gate receipt flush`, checkpoints). */
  flush(): Promise<void>
  /**
   * Runs the transparency log's checkpointer off the event loop, where the writer has a thread to host
   * it (the threaded writer); `local` starts one here instead, should that thread stop. Absent: run it here.
   */
  startCheckpointer?(settings: HostedCheckpointerSettings, local: () => CheckpointerControl, hooks: LeafHooks): Promise<CheckpointerControl>
  /** False after a failed commit until a later one succeeds: /gate/health answers 503. */
  readonly healthy: boolean
  /** Resolves once everything written so far is committed; later writes reject. */
  close(): Promise<void>
}

/** Options of `createInlineReceiptWriter`. */
export interface InlineReceiptWriterOptions {
  /** The authority signer, read at each write (`gate trust serve` rotates it). */
  signer: () => Signer
  /** Where rows go: the receipt store's log. */
  log: Pick<ReceiptLog, 'append' | 'onCommitted' | 'flush' | 'close' | 'healthy'>
}

/** Signs on the calling thread, then appends through the log's group commit. */
export function createInlineReceiptWriter(options: InlineReceiptWriterOptions): ReceiptWriter {
  const { log, signer } = options
  return {
    async write(body, context = {}) {
      // the row's tenant and subject are signed too: every column the audit can check (receipt-columns.ts)
      const { receipt, json } = signHttpReceiptJson(bindReceiptContext(body, context), signer())
      const { seq } = await log.append(createReceiptRow(receipt, json, context))
      return { receipt, json, seq }
    },
    async writeCore(body, context) {
      const { receipt, json } = signCoreReceiptJson(bindCoreReceiptContext(body, context) as unknown as Record<string, unknown>, signer())
      const { seq } = await log.append(createCoreReceiptRow(receipt, json, context))
      return { receipt, json, seq }
    },
    onCommitted: follower => log.onCommitted(follower),
    flush: () => log.flush(),
    get healthy() {
      return log.healthy
    },
    close: () => log.close(),
  }
}
