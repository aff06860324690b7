// Runs one README's command lines in order in one shell session, each as typed (its documented ports
// moved to free ones): a foreground command must exit 0, a background one (`… &`) must print the
// address it listens on, and where the README shows output, that output must appear.
import { mkdirSync } from 'node:fs'
import { missingLines, withoutBackgroundMark, type ReadmeCommand } from './extract.js'
import { listenPort, movePorts } from './ports.js'
import { ShellSession, type BackgroundJob } from './shell-session.js'

/** Options of `runReadme`. */
export interface RunReadmeOptions {
  /** The directory the commands run in (the repository root). */
  cwd: string
  env: NodeJS.ProcessEnv
  /** Documented port → the free port this run uses instead. */
  moved: ReadonlyMap<number, number>
  /** Where each command's output is kept. */
  outputDir: string
  /** Deadline of one foreground command. Default 600 s (`next build` on a busy two-core host). */
  commandTimeoutMs?: number
  /** Deadline for a background command to print its address. Default 300 s. */
  readyTimeoutMs?: number
  log: (line: string) => void
}

/** A README command that did not work as typed. */
export class ReadmeCommandError extends Error {
  constructor(
    readonly file: string,
    readonly command: ReadmeCommand,
    detail: string,
  ) {
    super(`${file}:${command.line}: ${command.text}\n${detail}`)
    this.name = 'ReadmeCommandError'
  }
}

/** Runs `commands` (the README `file`'s, in order); throws ReadmeCommandError at the first that fails. */
export async function runReadme(file: string, commands: readonly ReadmeCommand[], options: RunReadmeOptions): Promise<void> {
  mkdirSync(options.outputDir, { recursive: true })
  const session = ShellSession.start({ cwd: options.cwd, env: options.env, outputDir: options.outputDir })
  try {
    for (const command of commands) {
      const typed = movePorts(command.text, options.moved)
      const expected = command.expected.map(line => movePorts(line, options.moved))
      const started = Date.now()
      let output: string
      if (command.background) {
        const port = listenPort(typed)
        if (port === undefined) throw new ReadmeCommandError(file, command, 'a background command must name its port (--listen HOST:PORT, PORT=N or -p N)')
        const job = await session.startBackground(withoutBackgroundMark(typed))
        output = await waitForAddress(job, port, options.readyTimeoutMs ?? 300_000).catch((err: Error) => {
          throw new ReadmeCommandError(file, command, err.message)
        })
      } else {
        const killed = killedJobSpecs(typed)
        const groups = killed.length === 0 ? [] : await session.jobGroups(killed)
        const result = await session.run(typed, options.commandTimeoutMs ?? 600_000).catch((err: Error) => {
          throw new ReadmeCommandError(file, command, `${err.message}${jobLogs(session)}`)
        })
        if (result.status !== 0) throw new ReadmeCommandError(file, command, `exit status ${result.status}; it printed:\n${tail(result.output)}${jobLogs(session)}`)
        // A reader's shell says "Terminated" before they type on. Without this wait, a job started next
        // while the killed ones still stop takes job number 3 where the README's next `kill %1` expects 1.
        await session.waitForGroupsToExit(groups, 15_000)
        output = result.output
      }
      const missing = missingLines(expected, output)
      if (missing.length > 0) {
        throw new ReadmeCommandError(file, command, `the README shows output it did not print:\n${missing.join('\n')}\nit printed:\n${tail(output)}`)
      }
      options.log(`ok ${file}:${command.line} (${((Date.now() - started) / 1000).toFixed(1)} s) ${typed}`)
    }
  } finally {
    await session.close()
  }
}

/** The job specs (`%1`, `%2`, ...) a command sends a signal to with `kill`. */
export function killedJobSpecs(command: string): string[] {
  const specs: string[] = []
  for (const match of command.matchAll(/\bkill\b([^;&|\n]*)/g)) specs.push(...(match[1]!.match(/%\d+/g) ?? []))
  return specs
}

/** Resolves with the job's output once it mentions 127.0.0.1:`port`; rejects if it exits or stalls first. */
async function waitForAddress(job: BackgroundJob, port: number, timeoutMs: number): Promise<string> {
  const address = `127.0.0.1:${port}`
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const output = job.output()
    if (output.includes(address)) return output
    if (!job.alive()) throw new Error(`it exited before it printed ${address}; it printed:\n${tail(output)}`)
    if (Date.now() > deadline) throw new Error(`it did not print ${address} within ${timeoutMs / 1000} s; it printed:\n${tail(output)}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

/** The last 40 lines of an output. */
function tail(output: string): string {
  const lines = output.trimEnd().split('\n')
  return (lines.length > 40 ? ['…', ...lines.slice(-40)] : lines).join('\n')
}

/** The last lines of every background job, for a failure's context. */
function jobLogs(session: ShellSession): string {
  return session.jobs.map(job => `\n--- background job ${job.pid}:\n${tail(job.output())}`).join('')
}
