// Strict flag parsing for every subcommand: unknown flags and missing values are usage errors (exit 2)
// with a message naming the flag.
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { UsageError } from '../errors.js'
import { escapeControls } from './terminal-text.js'

export interface ParsedFlags {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>
  positionals: string[]
}

export function parseFlags(argv: string[], options: NonNullable<ParseArgsConfig['options']>, allowPositionals = false): ParsedFlags {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals }) as ParsedFlags
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''))
  }
}

/** Runs a subcommand body, mapping usage errors to exit 2 and other failures to exit 1. */
export async function runWithExitCodes(name: string, usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body()
  } catch (err) {
    const e = err as Error & { code?: string }
    if (e.name === 'UsageError') {
      process.stderr.write(`gate ${name}: ${escapeControls(e.message)}\n\n${usage}\n`)
      return 2
    }
    // a message may quote a server's answer or a receipt field
    process.stderr.write(`gate ${name}: ${escapeControls(e.message)}\n`)
    return 1
  }
}
