// One bash session per README, fed its commands one at a time, so that what a reader's terminal keeps
// between commands (exported variables, `cd`, background jobs and `kill %1`) carries over. Job control
// is on (`set -m`): each background job gets a process group of its own, which the session kills when
// it ends. A pipeline fails when any of its commands does (`set -o pipefail`, stricter than a reader's
// shell). Each command's output goes to a file of its own; the session reports its exit status.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** A finished foreground command. */
export interface CommandResult {
  status: number
  output: string
}

/** A background job: its process group and its output so far. */
export interface BackgroundJob {
  pid: number
  output(): string
  /** True while any process of its group runs. */
  alive(): boolean
}

export class ShellSession {
  readonly #bash: ChildProcessWithoutNullStreams
  readonly #marker = `__readme_runner_${randomBytes(6).toString('hex')}__`
  readonly #outputDir: string
  readonly #jobs: BackgroundJob[] = []
  #stdout = ''
  #counter = 0
  #waiter: (() => void) | undefined
  #exited = false
  #stuck = false

  private constructor(bash: ChildProcessWithoutNullStreams, outputDir: string) {
    this.#bash = bash
    this.#outputDir = outputDir
    bash.stdout.on('data', (chunk: Buffer) => {
      this.#stdout += chunk.toString('utf8')
      this.#waiter?.()
    })
    // job-control notices ("[1]+ Done") and the like: not a command's output
    bash.stderr.resume()
    bash.once('exit', () => {
      this.#exited = true
      this.#waiter?.()
    })
  }

  /** Starts bash in `cwd`; each command's output is written under `outputDir`. */
  static start(options: { cwd: string; env: NodeJS.ProcessEnv; outputDir: string }): ShellSession {
    const bash = spawn('bash', ['--noprofile', '--norc'], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] })
    // job control for `&` and `kill %1`; pipefail, so that `gate … | tee …` fails when gate does
    bash.stdin.write('set -m -o pipefail\n')
    return new ShellSession(bash, options.outputDir)
  }

  /** Runs `command` in the foreground; resolves with its exit status and output, or rejects after `timeoutMs`. */
  async run(command: string, timeoutMs: number): Promise<CommandResult> {
    const file = this.#nextFile()
    // braces, not a subshell: assignments, exports and cd stay in the session
    const status = await this.#send(`{\n${command}\n} > ${file} 2>&1 < /dev/null\necho "${this.#marker} $?"\n`, timeoutMs, command)
    return { status, output: readFileSync(file, 'utf8') }
  }

  /** Starts `command` (without its `&`) as a background job; its output goes to a file of its own. */
  async startBackground(command: string): Promise<BackgroundJob> {
    const file = this.#nextFile()
    const pid = await this.#send(`{\n${command}\n} > ${file} 2>&1 < /dev/null &\necho "${this.#marker} $!"\n`, 30_000, command)
    // the job's shell opens its output file after `$!` is known: until then it has printed nothing
    const job = { pid, output: () => (existsSync(file) ? readFileSync(file, 'utf8') : ''), alive: () => isGroupAlive(pid) }
    this.#jobs.push(job)
    return job
  }

  /** The process groups of the jobs bash knows as `specs` (`%1`, ...); a spec it does not know is left out. */
  async jobGroups(specs: readonly string[]): Promise<number[]> {
    const { output } = await this.run(`jobs -p ${specs.join(' ')}`, 30_000)
    return output.split('\n').filter(line => /^\d+$/.test(line.trim())).map(Number)
  }

  /** Resolves once no process of the groups `pids` runs (bash has reaped the jobs), or after `timeoutMs`. */
  async waitForGroupsToExit(pids: readonly number[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (pids.some(isGroupAlive) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 50))
  }

  /** The background jobs started so far (some may have been stopped by the README itself). */
  get jobs(): readonly BackgroundJob[] {
    return this.#jobs
  }

  /** Stops every background job still running (SIGTERM to its process group, SIGKILL after 10 s), then bash. */
  async close(): Promise<void> {
    for (const job of this.#jobs) signalGroup(job.pid, 'SIGTERM')
    const deadline = Date.now() + 10_000
    for (const job of this.#jobs) {
      while (job.alive() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
      signalGroup(job.pid, 'SIGKILL')
    }
    if (this.#exited) return
    const exited = new Promise<void>(resolve => this.#bash.once('exit', () => resolve()))
    // a command that timed out still runs in the foreground: bash would never read the exit
    if (this.#stuck) for (const pid of [...descendantsOf(this.#bash.pid!), this.#bash.pid!]) signal(pid, 'SIGKILL')
    else this.#bash.stdin.end('exit\n')
    await exited
  }

  #nextFile(): string {
    this.#counter++
    return join(this.#outputDir, `command-${this.#counter}.log`)
  }

  /** Writes `script` and waits for the marker line it prints; resolves with the number after it. */
  #send(script: string, timeoutMs: number, command: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined
        this.#stuck = true
        reject(new Error(`did not finish within ${timeoutMs / 1000} s (a server? end its line with " &")`))
      }, timeoutMs)
      this.#waiter = () => {
        const at = this.#stdout.indexOf(this.#marker)
        if (this.#exited && at < 0) {
          clearTimeout(timer)
          this.#waiter = undefined
          reject(new Error(`the shell exited while running: ${command}`))
          return
        }
        const end = this.#stdout.indexOf('\n', at)
        if (at < 0 || end < 0) return
        const value = Number(this.#stdout.slice(at + this.#marker.length, end).trim())
        this.#stdout = this.#stdout.slice(end + 1)
        clearTimeout(timer)
        this.#waiter = undefined
        resolve(value)
      }
      this.#bash.stdin.write(script)
      this.#waiter()
    })
  }
}

function signalGroup(pid: number, name: NodeJS.Signals): void {
  signal(-pid, name)
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // already gone (the README stopped it, or it exited)
  }
}

/** Every process below `pid`, from /proc (Linux; elsewhere none are found and only bash is killed). */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>()
  let entries: string[] = []
  try {
    entries = readdirSync('/proc').filter(name => /^\d+$/.test(name))
  } catch {
    return []
  }
  for (const name of entries) {
    try {
      // stat: "pid (comm) state ppid ...", comm may hold spaces and parentheses
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)])
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = []
  const queue = [pid]
  while (queue.length > 0) for (const child of children.get(queue.shift()!) ?? []) out.push(child), queue.push(child)
  return out
}

function isGroupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}
