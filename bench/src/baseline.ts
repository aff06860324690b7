// BENCH_BASELINE_DIR: an older built checkout whose `gate` the sidecar and proxy suites measure beside
// the current one, in the same run and rounds, so a change is compared with what it replaces on the
// same machine at the same time (build it there first: npm ci && npm run build).
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** The baseline's `gate` entry point, or undefined when BENCH_BASELINE_DIR is not set. */
export function baselineGateMain(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = env.BENCH_BASELINE_DIR
  if (dir === undefined || dir === '') return undefined
  const main = join(resolve(dir), 'sidecar', 'dist', 'cli', 'main.js')
  if (!existsSync(main)) throw new Error(`BENCH_BASELINE_DIR=${dir} has no built gate (${main}); run npm ci && npm run build there`)
  return main
}
