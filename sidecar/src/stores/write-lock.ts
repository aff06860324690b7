// Who may write to the receipt file right now: the event loop (its inline commits, through the main
// connection) or the receipt writer thread (its receipt commits and its transparency tree's writes,
// through its own connection). Two connections writing at once would make the second wait in SQLite's
// busy handler, which sleeps in steps of a millisecond or more (on node:sqlite, with the whole event
// loop); this shared word makes them take turns instead.
// - The event loop never waits: finding the lock taken, it hands its write to the thread. While the
//   thread wants the lock it starts no inline commit, so the ones in flight end and it is released.
// - The thread, which has nothing else to do meanwhile, blocks until the event loop's inline commits in
//   flight have ended (Atomics.wait, woken by the release); it never holds the lock across a wait for
//   another thread.

const OWNER = 0
const WANTED = 1

export const WRITE_LOCK_FREE = 0
export const HELD_BY_EVENT_LOOP = 1
export const HELD_BY_WRITER_THREAD = 2
export type WriteLockHolder = typeof HELD_BY_EVENT_LOOP | typeof HELD_BY_WRITER_THREAD

/** Longest single wait of the writer thread before it looks again (a release always wakes it sooner). */
const WAIT_SLICE_MS = 50

/** A lock both threads see (sent to the writer thread in its workerData). */
export function createWriteLock(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT))
}

/** Takes the lock for `holder` unless the other side has it; true when `holder` holds it now. */
export function tryWriteLock(lock: Int32Array, holder: WriteLockHolder): boolean {
  const was = Atomics.compareExchange(lock, OWNER, WRITE_LOCK_FREE, holder)
  return was === WRITE_LOCK_FREE || was === holder
}

/** Releases the lock `holder` holds, waking the writer thread when it waits for it. */
export function releaseWriteLock(lock: Int32Array, holder: WriteLockHolder): void {
  Atomics.compareExchange(lock, OWNER, holder, WRITE_LOCK_FREE)
  if (holder === HELD_BY_EVENT_LOOP && Atomics.load(lock, WANTED) !== 0) Atomics.notify(lock, OWNER)
}

/** True while the writer thread waits for the lock: the event loop then starts no inline commit. */
export function isWriteLockWanted(lock: Int32Array): boolean {
  return Atomics.load(lock, WANTED) !== 0
}

/**
 * The writer thread's side: its receipt commits and tree writes may overlap (one connection runs them
 * one at a time), so the lock is taken by the first and released by the last. Taking it blocks the
 * thread until the event loop has released it.
 */
export class WriterThreadLock {
  readonly #lock: Int32Array
  #depth = 0

  constructor(lock: Int32Array) {
    this.#lock = lock
  }

  /** Runs `fn` holding the lock (taken at once if this thread already holds it). */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#depth++ === 0) this.#take()
    try {
      return await fn()
    } finally {
      if (--this.#depth === 0) releaseWriteLock(this.#lock, HELD_BY_WRITER_THREAD)
    }
  }

  #take(): void {
    const lock = this.#lock
    while (!tryWriteLock(lock, HELD_BY_WRITER_THREAD)) {
      Atomics.store(lock, WANTED, 1)
      Atomics.wait(lock, OWNER, HELD_BY_EVENT_LOOP, WAIT_SLICE_MS)
    }
    Atomics.store(lock, WANTED, 0)
  }
}
