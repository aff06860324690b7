// `--tool-server ID=COMMAND` takes one string, split into words the way a POSIX shell splits a command
// line, without the shell: single quotes keep everything literally, double quotes keep everything but
// `\"`, `\\`, `\$` and `` \` `` (and a backslash-newline, which vanishes), a backslash outside quotes
// keeps the next character. No expansion of any kind: `$HOME`, `*` and `~` stay as written.
import { WireConfigError } from './errors.js'

const SPACE = /[ \t\n]/
const ESCAPED_IN_DOUBLE = new Set(['"', '\\', '$', '`', '\n'])

/** The words of `line`; throws WireConfigError on an unclosed quote or a trailing backslash. */
export function splitShellWords(line: string): string[] {
  const words: string[] = []
  let word = ''
  let inWord = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (SPACE.test(c)) {
      if (inWord) words.push(word)
      word = ''
      inWord = false
      continue
    }
    inWord = true
    if (c === '\\') {
      if (i + 1 >= line.length) throw new WireConfigError(`command ${JSON.stringify(line)} ends with a backslash`)
      const next = line[++i]!
      if (next !== '\n') word += next
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new WireConfigError(`command ${JSON.stringify(line)} has an unclosed single quote`)
      word += line.slice(i + 1, end)
      i = end
    } else if (c === '"') {
      let j = i + 1
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && ESCAPED_IN_DOUBLE.has(line[j + 1]!)) {
          if (line[j + 1] !== '\n') word += line[j + 1]
          j++
        } else word += line[j]
      }
      if (j >= line.length) throw new WireConfigError(`command ${JSON.stringify(line)} has an unclosed double quote`)
      i = j
    } else word += c
  }
  if (inWord) words.push(word)
  return words
}
