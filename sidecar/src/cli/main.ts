#!/usr/bin/env node
// `gate` command entry: dispatches to one module per subcommand (sidecar/src/cli/<name>.ts), loaded
// lazily so `gate check` never pays for the sidecar's SQLite driver.
import { COMMANDS, runCommand } from './commands.js'
import { escapeControls } from './terminal-text.js'

runCommand(process.argv.slice(2), COMMANDS).then(
  code => {
    process.exitCode = code
  },
  (err: unknown) => {
    process.stderr.write(`gate: ${escapeControls(err instanceof Error ? err.message : String(err))}\n`)
    process.exitCode = 1
  },
)
