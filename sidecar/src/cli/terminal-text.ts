// What the `gate` commands print comes partly from receipts and tokens, i.e. from whoever sent a
// request: a token's `schema`, a path, a deny reason. Written raw, an ESC sequence in one of them drives
// the operator's terminal (colours, cursor moves, a rewritten line, an OSC 52 clipboard write) and a
// newline forges output lines. Every such text goes through these before it is printed.

// C0 controls, DEL, C1 controls (0x9b is a one-byte CSI), the line and paragraph separators and the
// bidirectional controls that reorder what is shown (Trojan Source).
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
// In JSON text the C0 controls can only be whitespace between tokens (a string holds them escaped)
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/** One line of human text: every control character shown as an escape (`\n`, `\u001b`). */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, c => SHORT[c] ?? unicodeEscape(c))
}

/** Several lines of our own: each line escaped, our newlines kept. */
export function escapeLines(text: string): string {
  return text.split('\n').map(escapeControls).join('\n')
}

/** JSON text with the characters a terminal interprets written as `\uXXXX`: the same JSON value. */
export function escapeJsonControls(json: string): string {
  return json.replace(JSON_UNSAFE, unicodeEscape)
}
