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
      // the synopsis, not the whole help: several commands failing at once (a pasted block) stay readable
      process.stderr.write(`gate ${name}: ${escapeControls(e.message)}\n${usageSynopsis(usage)}\n(every option: gate ${name} --help)\n`)
      return 2
    }
    // a message may quote a server's answer or a receipt field
    process.stderr.write(`gate ${name}: ${escapeControls(e.message)}\n`)
    return 1
  }
}

/** The synopsis of a usage text: its lines up to the first blank one. */
export function usageSynopsis(usage: string): string {
  const end = usage.indexOf('\n\n')
  return end < 0 ? usage : usage.slice(0, end)
}

/** A whole number of seconds from 1 to 3600 given as FLAG, or `fallback` when the flag is absent. */
export function readSecondsFlag(value: unknown, flag: string, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > 3600) {
    throw new UsageError(`${flag} must be a whole number of seconds from 1 to 3600, got "${String(value)}"`)
  }
  return n
}
