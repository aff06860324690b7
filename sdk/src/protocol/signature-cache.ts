// Remembers (public key, message, signature) triples that verified, so a token presented on every
// request is verified once, not per request (Ed25519 verification costs more than the whole rest of an
// evaluation). Keyed by the exact signed bytes: a changed body or signature is a miss. Bounded, oldest
// entries evicted first.
export class VerifiedSignatureCache {
  readonly #entries = new Set<string>()
  constructor(readonly maxEntries = 10_000) {}

  static key(publicKey: string, message: string, signature: string): string {
    return `${publicKey}\n${signature}\n${message}`
  }

  has(key: string): boolean {
    return this.#entries.has(key)
  }

  add(key: string): void {
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.values().next().value as string)
    this.#entries.add(key)
  }

  get size(): number {
    return this.#entries.size
  }
}
