// `npm run pack-all [-- DIR]`: every publishable package (publishable.ts) packed with `npm pack` into
// DIR (default .gate/packages), ready for `npm install DIR/*.tgz` in another project (README, "Gate in
// your own project"). Prints each tarball's path.
import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { publishablePackages, tarballName } from './publishable.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Packs every publishable package into `dir`; returns the tarball paths, in dependency order. */
export function packAll(dir: string): string[] {
  const packages = publishablePackages(ROOT)
  mkdirSync(dir, { recursive: true })
  execFileSync('npm', ['pack', '--silent', '--pack-destination', dir, ...packages.flatMap(p => ['--workspace', p.name])], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  return packages.map(p => join(dir, tarballName(p)))
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = resolve(process.argv[2] ?? join(ROOT, '.gate', 'packages'))
  for (const file of packAll(dir)) process.stdout.write(`${file}\n`)
}
