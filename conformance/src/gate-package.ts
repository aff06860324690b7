// The installed @gate/sidecar package, found at run time (the suite never imports it): the `gate`
// command `--start-sidecar` runs, and the SQLite driver Gate's receipt file is written with.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { UsageError } from './errors.js'

/** The path of @gate/sidecar's package.json; a UsageError naming `what` needs it when it is not installed. */
function sidecarPackageJson(what: string): string {
  try {
    return createRequire(import.meta.url).resolve('@gate/sidecar/package.json')
  } catch (err) {
    throw new UsageError(`${what} needs the gate command: install @gate/sidecar beside @gate/conformance (npm ci in the Gate repository does)`, err)
  }
}

/** The `gate` entry of the installed @gate/sidecar package. */
export function findGateCommand(): string {
  const packageJson = sidecarPackageJson('--start-sidecar')
  const bin = (JSON.parse(readFileSync(packageJson, 'utf8')) as { bin?: Record<string, string> }).bin?.gate
  if (bin === undefined) throw new UsageError(`--start-sidecar: ${packageJson} names no gate command`)
  return resolve(dirname(packageJson), bin)
}

/** `require` as @gate/sidecar resolves its own dependencies (its SQLite driver). */
export function sidecarRequire(what: string): NodeJS.Require {
  return createRequire(sidecarPackageJson(what))
}
