// Who may write to the receipt file right now: the event loop (its inline commits, through the main
// connection) or the receipt writer thread (its transparency tree's writes, through its own). Two
// connections writing at once would make the second wait in SQLite's busy handler, which sleeps in
// steps of a millisecond or more (on node:sqlite, with the whole event loop); this shared word makes
// them take turns instead. Neither side ever blocks on it: the event loop that finds it taken hands its
// write to the thread, and the thread that finds it taken says it wants it and tries again shortly,
// while the event loop stops starting inline commits until it has released it.
// The thread's receipt commits need no turn: the event loop commits inline only while the thread holds
// no batch (threaded-receipt-writer.ts).

const OWNER = 0
const WANTED = 1

export const WRITE_LOCK_FREE = 0
export const HELD_BY_EVENT_LOOP = 1
export const HELD_BY_WRITER_THREAD = 2
export type WriteLockHolder = typeof HELD_BY_EVENT_LOOP | typeof HELD_BY_WRITER_THREAD

/** A lock both threads see (sent to the writer thread in its workerData). */
export function createWriteLock(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT))
}

/** Takes the lock for `holder` unless the other side has it; true when `holder` holds it now. */
export function tryWriteLock(lock: Int32Array, holder: WriteLockHolder): boolean {
  const was = Atomics.compareExchange(lock, OWNER, WRITE_LOCK_FREE, holder)
  return was === WRITE_LOCK_FREE || was === holder
}

export function releaseWriteLock(lock: Int32Array, holder: WriteLockHolder): void {
  Atomics.compareExchange(lock, OWNER, holder, WRITE_LOCK_FREE)
}

/** True while the writer thread waits for the lock: the event loop then starts no inline commit. */
export function isWriteLockWanted(lock: Int32Array): boolean {
  return Atomics.load(lock, WANTED) !== 0
}

const RETRY_MS = 1

/** The writer thread's turn: waits (without blocking its event loop) until it holds the lock, runs `fn`, releases. */
export async function withWriterThreadLock<T>(lock: Int32Array, fn: () => Promise<T>): Promise<T> {
  while (!tryWriteLock(lock, HELD_BY_WRITER_THREAD)) {
    Atomics.store(lock, WANTED, 1)
    await new Promise(resolve => setTimeout(resolve, RETRY_MS))
  }
  Atomics.store(lock, WANTED, 0)
  try {
    return await fn()
  } finally {
    releaseWriteLock(lock, HELD_BY_WRITER_THREAD)
  }
}
