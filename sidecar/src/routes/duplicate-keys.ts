// JSON.parse keeps the last of two equal member names without a word. The evaluate body's `query`
// map must not hide a duplicate key (spec 02: duplicate query key → 400), so this scans the raw text
// of the top-level member `member` for repeated keys. Linear, allocation-light, and skipped
// entirely when the text does not contain the member name.

/** The first key that appears twice inside the top-level object member `member`, if any. */
export function findDuplicateMemberKey(text: string, member: string): string | undefined {
  if (!text.includes(`"${member}"`)) return undefined
  const s = new Scanner(text)
  s.ws()
  if (text[s.i] !== '{') return undefined
  s.i++
  for (;;) {
    s.ws()
    if (text[s.i] !== '"') return undefined
    const key = s.string()
    s.ws()
    s.i++ // ':'
    s.ws()
    if (key === member && text[s.i] === '{') return s.duplicateIn()
    s.skipValue()
    s.ws()
    if (text[s.i] !== ',') return undefined
    s.i++
  }
}

class Scanner {
  i = 0
  constructor(readonly t: string) {}

  ws(): void {
    const t = this.t
    while (this.i < t.length) {
      const c = t.charCodeAt(this.i)
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++
      else return
    }
  }

  string(): string {
    const start = this.i
    let j = start + 1
    let escaped = false
    while (j < this.t.length && this.t.charCodeAt(j) !== 0x22) {
      if (this.t.charCodeAt(j) === 0x5c) {
        escaped = true
        j++
      }
      j++
    }
    this.i = j + 1
    const raw = this.t.slice(start, j + 1)
    return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1)
  }

  skipValue(): void {
    const t = this.t
    let depth = 0
    while (this.i < t.length) {
      const c = t[this.i] as string
      if (c === '"') {
        this.string()
        if (depth === 0) return
        continue
      }
      if (c === '{' || c === '[') depth++
      else if (c === '}' || c === ']') {
        if (depth === 0) return
        depth--
        if (depth === 0) {
          this.i++
          return
        }
      } else if (depth === 0 && (c === ',' )) return
      this.i++
    }
  }

  duplicateIn(): string | undefined {
    this.i++ // '{'
    const seen = new Set<string>()
    for (;;) {
      this.ws()
      if (this.t[this.i] !== '"') return undefined
      const key = this.string()
      if (seen.has(key)) return key
      seen.add(key)
      this.ws()
      this.i++ // ':'
      this.ws()
      this.skipValue()
      this.ws()
      if (this.t[this.i] !== ',') return undefined
      this.i++
    }
  }
}
