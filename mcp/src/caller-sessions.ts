// The hosted edge's live sessions by caller (the admitted principal), for the per-caller session cap
// (--max-sessions-per-caller): one admission token must not take the whole edge. A session counts from
// the moment its initialize takes a place (before the first await, so concurrent initializes cannot
// pass the cap together) until it ends.
import type { EdgeSessionRecord } from './edge-session-store.js'

export class CallerSessions {
  readonly #byCaller = new Map<string, Set<EdgeSessionRecord>>()

  /** The caller's live sessions (and those being opened). */
  count(principal: string): number {
    return this.#byCaller.get(principal)?.size ?? 0
  }

  add(record: EdgeSessionRecord): void {
    let sessions = this.#byCaller.get(record.principal)
    if (sessions === undefined) {
      sessions = new Set()
      this.#byCaller.set(record.principal, sessions)
    }
    sessions.add(record)
  }

  remove(record: EdgeSessionRecord): void {
    const sessions = this.#byCaller.get(record.principal)
    if (sessions === undefined) return
    sessions.delete(record)
    if (sessions.size === 0) this.#byCaller.delete(record.principal)
  }

  clear(): void {
    this.#byCaller.clear()
  }

  /**
   * Milliseconds until the caller's least recently active session would expire if left idle: when a
   * place frees by itself (a DELETE frees one at once). `idleMs` when the caller has none.
   */
  msToFirstExpiry(principal: string, idleMs: number, now: number): number {
    let first = Infinity
    for (const record of this.#byCaller.get(principal) ?? []) first = Math.min(first, record.lastActiveAt + idleMs)
    return Number.isFinite(first) ? first - now : idleMs
  }
}
