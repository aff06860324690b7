#!/usr/bin/env node
// The `gate-conformance` command as npm links it (node_modules/.bin/gate-conformance). This file is
// committed so that it exists when `npm ci` links the bin (npm skips a bin whose file is missing, and
// dist/ is built later); the command itself is compiled into dist/.
import { existsSync } from 'node:fs'

const cli = new URL('../dist/cli.js', import.meta.url)
if (existsSync(cli)) {
  await import(cli.href)
} else {
  process.stderr.write('gate-conformance: the command is not built yet (conformance/dist is missing): run `npm run build` in the repository root\n')
  process.exitCode = 1
}
