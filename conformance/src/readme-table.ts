// The README's check table, generated from CHECKS (run `node conformance/dist/update-readme.js` after
// changing a check; readme-table.test.ts fails while the README is out of date).
import type { CheckDefinition } from './check.js'

export const TABLE_START = '<!-- checks:start (generated from CHECKS by dist/update-readme.js; do not edit) -->'
export const TABLE_END = '<!-- checks:end -->'

function cell(text: string): string {
  return text.replace(/\|/g, '\\|')
}

/** The Markdown table of the checks, between the markers. */
export function renderCheckTable(checks: readonly CheckDefinition[]): string {
  const rows = checks.map(c => {
    const needs = c.needs === undefined || c.needs.length === 0 ? '' : ` (needs ${c.needs.join(', ')})`
    return `| \`${c.id}\` | ${c.required ? 'required' : 'advisory'} | ${cell(c.description)}${needs} | ${cell(c.specRef)} |`
  })
  return [TABLE_START, '', `${checks.length} checks.`, '', '| id | kind | description | spec reference |', '|---|---|---|---|', ...rows, '', TABLE_END].join('\n')
}

/** `readme` with the text between the markers replaced by the current table. */
export function replaceCheckTable(readme: string, checks: readonly CheckDefinition[]): string {
  const start = readme.indexOf(TABLE_START)
  const end = readme.indexOf(TABLE_END)
  if (start < 0 || end < start) throw new Error('the README has no check-table markers')
  return readme.slice(0, start) + renderCheckTable(checks) + readme.slice(end + TABLE_END.length)
}
