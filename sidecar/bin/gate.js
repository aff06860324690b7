#!/usr/bin/env node
// The `gate` command as npm links it (node_modules/.bin/gate). This file is committed so that it exists
// when `npm ci` links the bin (npm skips a bin whose file is missing, and dist/ is built later); the
// command itself is compiled into dist/.
import { existsSync } from 'node:fs'

const main = new URL('../dist/cli/main.js', import.meta.url)
if (existsSync(main)) {
  await import(main.href)
} else {
  process.stderr.write('gate: the command is not built yet (sidecar/dist is missing): run `npm run build` in the repository root\n')
  process.exitCode = 1
}
