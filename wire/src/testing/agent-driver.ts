// The test side of driven-agent.ts: sends its commands and waits for its events (never a sleep).
import type { Readable, Writable } from 'node:stream'
import { createInterface } from 'node:readline'

export interface AgentEvent {
  event: string
  message?: Record<string, unknown> & { type?: string; id?: string }
  error?: string | null
  [key: string]: unknown
}

export class AgentDriver {
  readonly events: AgentEvent[] = []
  readonly #stdin: Writable
  readonly #waiters = new Set<() => void>()

  constructor(stdout: Readable, stdin: Writable) {
    this.#stdin = stdin
    createInterface({ input: stdout }).on('line', line => {
      if (!line.startsWith('{')) return
      this.events.push(JSON.parse(line) as AgentEvent)
      for (const w of this.#waiters) w()
    })
  }

  send(message: Record<string, unknown>): void {
    this.#stdin.write(JSON.stringify({ op: 'send', message }) + '\n')
  }

  bytes(bytes: Uint8Array): void {
    this.#stdin.write(JSON.stringify({ op: 'bytes', hex: Buffer.from(bytes).toString('hex') }) + '\n')
  }

  end(): void {
    this.#stdin.write(JSON.stringify({ op: 'end' }) + '\n')
  }

  /** Replaces the agent's connection with a new one; resolves once it is connected. */
  reconnect(): Promise<AgentEvent> {
    const from = this.events.length
    this.#stdin.write(JSON.stringify({ op: 'connect' }) + '\n')
    return this.waitFor(e => e.event === 'ready', from)
  }

  exit(code: number): void {
    this.#stdin.write(JSON.stringify({ op: 'exit', code }) + '\n')
  }

  /** Resolves with the first event (from index `from` on) that `match` accepts. */
  waitFor(match: (e: AgentEvent) => boolean, from = 0): Promise<AgentEvent> {
    return new Promise(resolve => {
      const check = () => {
        const found = this.events.slice(from).find(match)
        if (found === undefined) return
        this.#waiters.delete(check)
        resolve(found)
      }
      this.#waiters.add(check)
      check()
    })
  }

  /** The kernel's frame of `type` (and call id, when given). */
  frame(type: string, id?: string): Promise<NonNullable<AgentEvent['message']>> {
    return this.waitFor(e => e.event === 'frame' && e.message?.type === type && (id === undefined || e.message?.id === id)).then(e => e.message!)
  }

  /** Every frame received so far for call `id`, in order. */
  framesOf(id: string): NonNullable<AgentEvent['message']>[] {
    return this.events.filter(e => e.event === 'frame' && e.message?.id === id).map(e => e.message!)
  }
}
