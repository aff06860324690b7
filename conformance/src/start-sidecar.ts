// `gate-conformance --start-sidecar`: the suite against `gate sidecar`s made for it. Each is started on a
// free loopback port with the suite's document, a receipt store in a temporary directory and a control
// token of its own, and is stopped and deleted afterwards, so no probe receipt lands in a user's store.
// Each trusts an issuer key made for the run (or --issuer-seed-file's), so the delegation and token-field
// checks run too. A full run takes three: the nonces.* checks need a sidecar with strict execution nonces,
// the proxy.* checks `gate api protect` in front of an upstream the suite records, every other check a
// sidecar without strict nonces; their results are merged into one report. The `gate` command comes
// from the @gate/sidecar package installed beside this one (found at run time: the suite never imports it).
// The suite owns their stores, so the checks that alter a stored receipt run against them too.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSigner, generateSecret, type Signer } from '@gate/sdk'
import type { CheckDefinition } from './check.js'
import { DEFAULT_SPEC_TEXT } from './default-spec.js'
import { UsageError } from './errors.js'
import { startRecordingUpstream, type RecordingUpstream } from './fakes/recording-upstream.js'
import { findGateCommand } from './gate-package.js'
import { gateReceiptFile } from './receipt-store.js'
import { summarize, type CheckResult, type Report } from './report.js'
import { CHECKS, runConformance, type ConformanceOptions } from './run-conformance.js'

export { findGateCommand } from './gate-package.js'

/** A sidecar started for the suite. */
export interface StartedSidecar {
  url: string
  controlToken: string
  /** Its SQLite receipt file (in the temporary directory `stop` deletes). */
  receiptStore: string
  /** Stops it (SIGTERM, then waits for its exit) and deletes its directory. */
  stop(): Promise<void>
}

/** How long a sidecar may take to print its listening line (a loaded CI host can take many seconds). */
const READY_TIMEOUT_MS = 60_000

/**
 * Starts `gate sidecar` for the suite, or with `upstream` `gate api protect` in front of it; `spec` is a
 * document path, or undefined for the suite's own.
 */
export async function startSidecar(options: { spec?: string; strictNonces: boolean; gateCommand?: string; trustedIssuer?: string; upstream?: string }): Promise<StartedSidecar> {
  const gate = options.gateCommand ?? findGateCommand()
  const dir = await mkdtemp(join(tmpdir(), 'gate-conformance-'))
  const specPath = options.spec ?? join(dir, 'pets.json')
  if (options.spec === undefined) await writeFile(specPath, DEFAULT_SPEC_TEXT)
  const controlToken = randomBytes(24).toString('hex')
  // 2 s nonces: nonces.expired-denied then waits about 3 s instead of being skipped
  const strict = options.strictNonces ? ['--strict-nonces', '--nonce-ttl-secs', '2'] : []
  const trusted = options.trustedIssuer === undefined ? [] : ['--trusted-issuer', options.trustedIssuer]
  const command = options.upstream === undefined ? ['sidecar'] : ['api', 'protect', '--upstream', options.upstream]
  const name = `gate ${command.slice(0, 2).join(' ')}`
  const receiptStore = join(dir, 'receipts.db')
  const args = [...command, '--listen', '127.0.0.1:0', '--spec', specPath, '--receipt-store', receiptStore, ...strict, ...trusted]
  const child = spawn(process.execPath, [gate, ...args], { env: { ...process.env, GATE_CONTROL_TOKEN: controlToken }, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>(done => child.once('exit', () => done()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
    await rm(dir, { recursive: true, force: true })
  }
  let output = ''
  try {
    const url = await new Promise<string>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`${name} did not start within ${READY_TIMEOUT_MS / 1000} s:\n${output}`)), READY_TIMEOUT_MS)
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8')
        const match = /listening on (http:\/\/[^\s"]+)/.exec(output)
        if (match === null) return
        clearTimeout(timer)
        ready(match[1]!)
      }
      child.stdout.on('data', onData)
      child.stderr.on('data', onData)
      void exited.then(() => {
        clearTimeout(timer)
        fail(new Error(`${name} exited before it listened:\n${output}`))
      })
    })
    return { url, controlToken, receiptStore, stop }
  } catch (err) {
    await stop()
    throw new UsageError(`--start-sidecar: ${(err as Error).message}`, err)
  }
}

/** Options of `runAgainstStartedSidecars`: those of `runConformance` minus what the started sidecars decide. */
export type StartedRunOptions = Omit<ConformanceOptions, 'sidecarUrl' | 'controlToken' | 'spec'> & {
  /** A document path to start the sidecars with (and to check against); default the suite's own. */
  spec?: string
  /** Progress lines (which sidecar started, when it stopped). */
  log?: (line: string) => void
  gateCommand?: string
}

/** The started process a check runs against: a plain sidecar, one with strict nonces, or the proxy. */
type StartedRun = 'plain' | 'strict' | 'proxy'
const RUNS: readonly StartedRun[] = ['plain', 'strict', 'proxy']

function runOf(check: CheckDefinition): StartedRun {
  if (check.needs?.includes('strict-nonces') === true) return 'strict'
  return check.needs?.includes('proxy') === true ? 'proxy' : 'plain'
}

/** Runs the selected checks against sidecars started for them and merges the results into one report. */
export async function runAgainstStartedSidecars(options: StartedRunOptions): Promise<Report> {
  const selected = options.only === undefined || options.only.length === 0 ? CHECKS : CHECKS.filter(c => options.only!.includes(c.id))
  const runs = options.strictNonces === true ? (['strict'] as const) : RUNS.filter(run => selected.some(c => runOf(c) === run))
  const started = Date.now()
  const reports = new Map<StartedRun, Report>()
  // the delegation and token-field checks sign with an issuer the sidecar trusts: one made for the run
  // unless --issuer-seed-file named one (its key is then trusted the same way)
  const issuer: Signer = options.issuer ?? createSigner({ secret: generateSecret() })
  for (const run of runs) {
    const strictNonces = run === 'strict'
    let upstream: RecordingUpstream | null = null
    let sidecar: StartedSidecar | undefined
    try {
      if (run === 'proxy') upstream = await startRecordingUpstream()
      sidecar = await startSidecar({ spec: options.spec, strictNonces, gateCommand: options.gateCommand, trustedIssuer: issuer.publicKey, upstream: upstream?.url })
      const what = run === 'proxy' ? `gate api protect on ${sidecar.url} in front of the suite's recording upstream ${upstream!.url}` : `gate sidecar${strictNonces ? ' --strict-nonces' : ''} on ${sidecar.url}`
      options.log?.(`started ${what} (document ${options.spec ?? 'built-in'}, a temporary store, its own control token)`)
      // the proxy runs only its own checks; the sidecars every selected one (the other mode's skip at once)
      const only = run === 'proxy' ? selected.filter(c => runOf(c) === 'proxy').map(c => c.id) : options.only
      // the suite owns this store (a temporary file): the checks that alter a stored receipt may
      const receiptStore = gateReceiptFile(sidecar.receiptStore)
      reports.set(run, await runConformance({ ...options, only, sidecarUrl: sidecar.url, controlToken: sidecar.controlToken, spec: options.spec, strictNonces, issuer, proxyUpstream: upstream, receiptStore }))
    } finally {
      if (sidecar !== undefined) {
        await sidecar.stop()
        options.log?.(`stopped ${run === 'proxy' ? 'gate api protect' : 'gate sidecar'} on ${sidecar.url} and deleted its store`)
      }
      await upstream?.close()
    }
  }
  // each check's result from the process of its kind (or, when that one did not run, the first one's skip)
  const first = reports.get(runs[0]!)!
  const results: CheckResult[] = selected.map(c => (reports.get(runOf(c)) ?? first).results.find(r => r.id === c.id)!)
  const all = [...reports.values()]
  return {
    sidecarUrl: `gate sidecar started by gate-conformance (${all.map(r => r.sidecarUrl).join(', ')})`,
    spec: first.spec,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    results,
    needs: [...new Set(all.flatMap(r => r.needs))],
    ...summarize(results),
  }
}
