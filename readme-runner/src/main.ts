// The README runner (CI: .ci/run): every command line of every README, run as typed, in order, in a
// clean checkout where `npm ci` has run. README.md's first block is the set-up (`npm ci && npm start`,
// `npm test`); each README then runs after it alone, as if in a fresh clone:
//   - `npm ci` is the caller's (.ci/run installs before it calls this), `npm start` is started here, on
//     the port its comment documents (moved, like every documented port, to a free one), and
//     `npm test` is not run here: .ci/run runs it after this, and the READMEs do not depend on it
//     (running it here would run the whole suite a second time);
//   - whatever a README's commands created (untracked or ignored files, .gate/ of npm start included)
//     is deleted before the next one, and one that changed a tracked file fails.
// npx never reaches a registry here: npm's registry is set to a closed port.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { extractCommands, type ReadmeCommand } from './extract.js'
import { documentedPorts, movedPorts } from './ports.js'
import { runReadme } from './run-readme.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SET_UP = ['npm ci && npm start', 'npm test']
const log = (line: string) => process.stdout.write(`readme-runner: ${line}\n`)

/** The environment of every command: the reader's, without Gate settings a README must make itself. */
function readerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_registry: 'http://127.0.0.1:9/', npm_config_update_notifier: 'false', NEXT_TELEMETRY_DISABLED: '1' }
  for (const name of Object.keys(env)) if (name.startsWith('GATE_')) delete env[name]
  return env
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' })
}

/** Paths git reports as untracked or ignored (a new directory as one entry), and changed tracked ones. */
function worktreeState(): { extra: Set<string>; untracked: string[]; modified: string[] } {
  const extra = new Set<string>()
  const untracked: string[] = []
  const modified: string[] = []
  for (const line of git('status', '--porcelain', '--ignored').split('\n')) {
    if (line === '') continue
    const path = line.slice(3)
    if (line.startsWith('??') || line.startsWith('!!')) extra.add(path)
    if (line.startsWith('??')) untracked.push(path)
    else if (!line.startsWith('!!')) modified.push(path)
  }
  return { extra, untracked, modified }
}

/** The set-up commands of README.md without their comments, checked against the two this runner knows. */
function checkSetUp(block: readonly ReadmeCommand[] | undefined): number {
  const typed = (block ?? []).map(c => c.text.replace(/\s+#.*$/, ''))
  if (JSON.stringify(typed) !== JSON.stringify(SET_UP)) {
    throw new Error(`README.md must start with the two set-up commands ${JSON.stringify(SET_UP)}, found ${JSON.stringify(typed)}`)
  }
  const port = documentedPorts([block![0]!.text])[0]
  if (port === undefined) throw new Error('README.md: the set-up line of npm start must document its address (127.0.0.1:PORT)')
  return port
}

/** Starts `npm start` on `port`; resolves with a stop function once it listens. */
async function startNpmStart(port: number, env: NodeJS.ProcessEnv): Promise<() => Promise<void>> {
  const child = spawn('npm', ['start', '--', '--listen', `127.0.0.1:${port}`], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen within 300 s:\n${output}`)), 300_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      if (!output.includes(`listening on http://127.0.0.1:${port}`)) return
      clearTimeout(timer)
      resolve()
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`npm start exited:\n${output}`))
    })
  })
  return async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {
      // already gone
    }
    await exited
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write('Usage: node readme-runner/dist/main.js [README.md ...]\n\nRuns every README command line as typed, in a clean checkout after npm ci (see the top of readme-runner/src/main.ts).\n')
    return 0
  }
  const before = worktreeState()
  if (before.modified.length > 0 || before.untracked.length > 0 || existsSync(join(ROOT, '.gate'))) {
    throw new Error('run this in a clean checkout (a fresh clone after npm ci): it has changed or untracked files, or a .gate directory')
  }
  if (!existsSync(join(ROOT, 'node_modules', '.bin', 'gate'))) throw new Error('node_modules/.bin/gate is missing: run npm ci first')
  const blocks = extractCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'))
  const npmStartPort = checkSetUp(blocks[0])
  const files = argv.length > 0 ? argv.map(f => relative(ROOT, join(process.cwd(), f))) : ['README.md', ...git('ls-files', '*README.md').split('\n').filter(f => f !== '' && f !== 'README.md')]
  const env = readerEnv()
  const outputDir = mkdtempSync(join(tmpdir(), 'readme-runner-'))
  let ran = 0
  let readmes = 0
  for (const file of files) {
    const all = extractCommands(readFileSync(join(ROOT, file), 'utf8'))
    const commands = (file === 'README.md' ? all.slice(1) : all).flat()
    if (commands.length === 0) continue
    const moved = await movedPorts(documentedPorts([blocks[0]![0]!.text, ...commands.flatMap(c => [c.text, ...c.expected])]))
    log(`${file}: ${commands.length} commands; set-up first (npm start on 127.0.0.1:${moved.get(npmStartPort)}, for ${npmStartPort}; npm test runs after the READMEs, in .ci/run)`)
    const stopNpmStart = await startNpmStart(moved.get(npmStartPort)!, env)
    try {
      await runReadme(file, commands, { cwd: ROOT, env, moved, outputDir: join(outputDir, file.replace(/\W+/g, '-')), log })
    } catch (err) {
      log(`every command's output is kept in ${outputDir}`)
      throw err
    } finally {
      await stopNpmStart()
      const after = worktreeState()
      for (const path of after.extra) if (!before.extra.has(path)) rmSync(join(ROOT, path), { recursive: true, force: true })
      // a README whose commands changed tracked files fails, even when one of its commands failed too
      // biome-ignore lint/correctness/noUnsafeFinally: that failure is the one to report
      if (after.modified.length > 0) throw new Error(`${file}: its commands changed tracked files: ${after.modified.join(', ')}`)
    }
    ran += commands.length
    readmes++
  }
  rmSync(outputDir, { recursive: true, force: true })
  log(`every command worked as typed (${ran} commands in ${readmes} READMEs)`)
  return 0
}

main(process.argv.slice(2)).then(
  code => {
    process.exitCode = code
  },
  (err: unknown) => {
    process.stderr.write(`readme-runner: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exitCode = 1
  },
)
