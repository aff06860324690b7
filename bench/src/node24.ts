// A Node 24 binary for the benchmarks that compare runtimes: Node 24 has `node:sqlite`, which the
// sidecar's stores use instead of the `sqlite3` addon (statements run on the event loop, no thread
// hop per commit). Taken from GATE_NODE24, or from .ci/node24 (where .ci/run installs it), or installed
// there from the npm registry (the `node` package, ~6 s) when missing.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export type Node24Binary = { path: string; version: string } | { skip: string }

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const PREFIX = `${REPO}.ci/node24`
const LOCAL = `${PREFIX}/node_modules/node/bin/node`

/** The Node 24 binary, installing it into .ci/node24 when it is missing. */
export function findOrInstallNode24(log: (line: string) => void): Node24Binary {
  const found = [process.env.GATE_NODE24, LOCAL].find(p => p !== undefined && p !== '' && existsSync(p))
  if (found !== undefined) return withVersion(found)
  log('Node 24 not found; installing the npm package node@24 into .ci/node24 (benchmark comparison only)')
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', PREFIX, 'node@24'], { encoding: 'utf8', timeout: 300_000 })
  if (!existsSync(LOCAL)) return { skip: `node@24 could not be installed: ${(r.stderr ?? '').trim().split('\n').slice(-1)[0] ?? `exit ${r.status}`}` }
  return withVersion(LOCAL)
}

function withVersion(path: string): Node24Binary {
  const r = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 })
  const version = (r.stdout ?? '').trim()
  if (r.status !== 0 || !/^v24\./.test(version)) return { skip: `${path} is not Node 24 (${version || `exit ${r.status}`})` }
  return { path, version }
}
