// For the broken sidecar: finds a key repeated inside the top-level "query" object of a JSON text
// (JSON.parse keeps the last one silently). `decodeEscapes: false` compares the raw key spellings,
// the naive variant a fault uses ("a" and "\u0061" then look different). Test support only.

/** The first repeated query key, or undefined. The text is assumed to be valid JSON. */
export function findDuplicateQueryKey(text: string, options: { decodeEscapes: boolean }): string | undefined {
  let i = 0
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++
  }
  const rawString = (): string => {
    const start = i
    i++
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
    return text.slice(start, i)
  }
  const key = (raw: string): string => (options.decodeEscapes ? (JSON.parse(raw) as string) : raw.slice(1, -1))
  const skipValue = () => {
    let depth = 0
    do {
      ws()
      const c = text[i]
      if (c === '"') rawString()
      else if (c === '{' || c === '[') {
        depth++
        i++
      } else if (c === '}' || c === ']') {
        depth--
        i++
      } else if (c === ',' || c === ':') i++
      else while (i < text.length && !',:]} \t\n\r'.includes(text[i]!)) i++
    } while (depth > 0 && i < text.length)
  }
  ws()
  if (text[i] !== '{') return undefined
  i++
  for (;;) {
    ws()
    if (text[i] !== '"') return undefined
    const member = key(rawString())
    ws()
    i++ // ':'
    ws()
    if (member === 'query' && text[i] === '{') {
      i++
      const seen = new Set<string>()
      for (;;) {
        ws()
        if (text[i] !== '"') break
        const k = key(rawString())
        if (seen.has(k)) return k
        seen.add(k)
        ws()
        i++ // ':'
        skipValue()
        ws()
        if (text[i] !== ',') break
        i++
      }
      i++ // '}'
    } else {
      skipValue()
    }
    ws()
    if (text[i] !== ',') return undefined
    i++
  }
}
