// The command lines of a README as a newcomer types them: every line of its ```sh blocks, in order,
// with backslash continuations joined and comment lines left out. A ```text block right after an sh
// block is what the last command of that block prints: each of its lines must appear in that output
// (`…` stands for anything).

/** One command line of a README. */
export interface ReadmeCommand {
  /** The command as typed, continuation lines joined. */
  text: string
  /** Where it starts in the README (1-based line). */
  line: number
  /** Ends with `&`: it keeps running in the background (a server). */
  background: boolean
  /** Lines its output must contain (from the text block after its sh block). */
  expected: string[]
}

/** A fenced block: its info string and lines. */
interface Fence {
  info: string
  /** 1-based line of the first content line. */
  start: number
  lines: string[]
  /** 1-based line of the closing fence. */
  end: number
}

const FENCE = /^ {0,3}(`{3,})\s*([^`\s]*)/

/** The fenced code blocks of a Markdown text, in order. */
function fences(markdown: string): Fence[] {
  const lines = markdown.split('\n')
  const out: Fence[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!)
    if (open === null) continue
    const ticks = open[1]!
    const body: string[] = []
    let j = i + 1
    while (j < lines.length && !new RegExp(`^\\s*${ticks}\\s*$`).test(lines[j]!)) body.push(lines[j++]!)
    out.push({ info: open[2]!.toLowerCase(), start: i + 2, lines: body, end: j + 1 })
    i = j
  }
  return out
}

/** True when the command ends with `&` (a trailing comment allowed after it). */
export function isBackground(text: string): boolean {
  return /(?:^|[^&])&\s*(?:#.*)?$/.test(text.trim())
}

/** The command without its trailing `&` (and the comment after it). */
export function withoutBackgroundMark(text: string): string {
  return text.trim().replace(/&\s*(?:#.*)?$/, '').trimEnd()
}

/** The commands of every ```sh block of `markdown`, in order. */
export function extractCommands(markdown: string): ReadmeCommand[][] {
  const blocks = fences(markdown)
  const markdownLines = markdown.split('\n')
  const out: ReadmeCommand[][] = []
  blocks.forEach((block, index) => {
    if (block.info !== 'sh') return
    const commands: ReadmeCommand[] = []
    let pending: { text: string; line: number } | undefined
    block.lines.forEach((raw, offset) => {
      const line = block.start + offset
      const trimmed = raw.trim()
      if (pending === undefined && (trimmed === '' || trimmed.startsWith('#'))) return
      const text = pending === undefined ? trimmed : `${pending.text} ${trimmed}`
      const start = pending?.line ?? line
      if (text.endsWith('\\')) {
        pending = { text: text.slice(0, -1).trimEnd(), line: start }
        return
      }
      pending = undefined
      commands.push({ text, line: start, background: isBackground(text), expected: [] })
    })
    if (pending !== undefined) commands.push({ text: pending.text, line: pending.line, background: isBackground(pending.text), expected: [] })
    const next = blocks[index + 1]
    const between = next === undefined ? [] : markdownLines.slice(block.end, next.start - 2)
    if (next?.info === 'text' && between.every(l => l.trim() === '') && commands.length > 0) {
      commands[commands.length - 1]!.expected = next.lines.map(l => l.trim()).filter(l => l !== '')
    }
    out.push(commands)
  })
  return out
}

/** True when every expected line appears in `output` (`…` matching anything, including nothing). */
export function missingLines(expected: readonly string[], output: string): string[] {
  return expected.filter(line => {
    const pattern = line
      .split('…')
      .map(part => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')
    return !new RegExp(pattern).test(output)
  })
}
