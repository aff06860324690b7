// Rewrites the check table of conformance/README.md from CHECKS: `node conformance/dist/update-readme.js`.
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { replaceCheckTable } from './readme-table.js'
import { CHECKS } from './run-conformance.js'

const README = fileURLToPath(new URL('../README.md', import.meta.url))
const before = await readFile(README, 'utf8')
const after = replaceCheckTable(before, CHECKS)
if (after === before) {
  process.stdout.write('conformance/README.md is up to date\n')
} else {
  await writeFile(README, after)
  process.stdout.write(`conformance/README.md: check table rewritten (${CHECKS.length} checks)\n`)
}
