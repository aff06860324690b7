// The lineage of one agent session as its receipts are written (docs/receipts.md, Receipt lineage):
// one chain per session, a fresh `chainId` each. A call's decision follows from every head of the chain
// (each receipt no later call has named: the previous call, and what was recorded since, such as the
// child receipt of a sampling request the call made); a final or a child receipt follows from the
// call it belongs to. Parents are named only once committed (their ids are known then), so calls in
// flight together are siblings, and the next call names both. The clock is the kernel's hybrid logical
// clock: never behind the wall clock, and strictly increasing on one kernel.
import type { HybridLogicalClock } from '../types.js'
import { normalizeParentIds, parentSetHash, type LineageFields } from './receipt-dag.js'
import { uuidv7 } from './request-id.js'
import { sha256Hex } from './sha256.js'

/** The `kernelId` of a kernel: the first 16 hex characters of the SHA-256 of its wire public key. */
export function kernelIdOf(publicKey: string): string {
  return sha256Hex(publicKey).slice(0, 16)
}

/** One kernel's hybrid logical clock. */
export class LogicalClock {
  readonly kernelId: string
  readonly #now: () => number
  #last: HybridLogicalClock | undefined

  /** `now` is in Unix seconds (default: the system clock). */
  constructor(kernelId: string, now: () => number = () => Math.floor(Date.now() / 1000)) {
    this.kernelId = kernelId
    this.#now = now
  }

  /** The next reading, after every clock in `after` (the parents') and every earlier reading. */
  tick(after: readonly HybridLogicalClock[] = []): HybridLogicalClock {
    let wallSeconds = this.#now()
    let logical = 0
    for (const c of [...(this.#last === undefined ? [] : [this.#last]), ...after]) {
      if (c.wallSeconds > wallSeconds) {
        wallSeconds = c.wallSeconds
        logical = c.logical + 1
      } else if (c.wallSeconds === wallSeconds) logical = Math.max(logical, c.logical + 1)
    }
    this.#last = { wallSeconds, logical, kernelId: this.kernelId }
    return this.#last
  }
}

interface ChainNode {
  dagOrdinal: number
  hlc: HybridLogicalClock
}

/** The lineage of one receipt about to be written: its members, and what to do once its fate is known. */
export interface PendingLineage {
  fields: LineageFields
  /** The receipt was committed under `receiptId`: it becomes a head of the chain. */
  commit(receiptId: string): void
  /** It was not written: the heads it would have named are heads again. */
  abandon(): void
}

// Receipts a final or a child can still name; a session longer than this names the heads instead.
const KNOWN_LIMIT = 4096

/** The lineage of one agent session. */
export class ReceiptChain {
  readonly chainId: string
  readonly #clock: LogicalClock
  readonly #heads = new Map<string, ChainNode>()
  readonly #known = new Map<string, ChainNode>()

  constructor(clock: LogicalClock, chainId: string = uuidv7()) {
    this.#clock = clock
    this.chainId = chainId
  }

  /** A call's decision: it follows from every head, which stop being heads. */
  beginCall(): PendingLineage {
    const parents = new Map(this.#heads)
    this.#heads.clear()
    return this.#pending(parents, () => {
      for (const [id, node] of parents) if (!this.#heads.has(id)) this.#heads.set(id, node)
    })
  }

  /**
   * A receipt following `parentIds` (a final its decision, a child receipt its call): the heads stay
   * heads. Without a known parent (a request relayed while no call was in flight) it follows the heads.
   */
  follow(parentIds: readonly string[]): PendingLineage {
    const parents = new Map<string, ChainNode>()
    for (const id of parentIds) {
      const node = this.#known.get(id)
      if (node !== undefined) parents.set(id, node)
    }
    return this.#pending(parents.size > 0 ? parents : new Map(this.#heads), () => {})
  }

  #pending(parents: ReadonlyMap<string, ChainNode>, onAbandon: () => void): PendingLineage {
    const ids = normalizeParentIds(parents.keys())
    let highest = -1
    for (const node of parents.values()) highest = Math.max(highest, node.dagOrdinal)
    const hlc = this.#clock.tick([...parents.values()].map(n => n.hlc))
    const fields: LineageFields = { chainId: this.chainId, parentReceiptIds: ids, parentSetHash: parentSetHash(ids), dagOrdinal: highest + 1, hlc }
    let settled = false
    return {
      fields,
      commit: (receiptId: string) => {
        if (settled) return
        settled = true
        const node = { dagOrdinal: fields.dagOrdinal, hlc }
        this.#heads.set(receiptId, node)
        if (this.#known.size >= KNOWN_LIMIT) this.#known.delete(this.#known.keys().next().value as string)
        this.#known.set(receiptId, node)
      },
      abandon: () => {
        if (settled) return
        settled = true
        onAbandon()
      },
    }
  }
}
