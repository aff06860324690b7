// The packages Gate publishes: every workspace of the root package.json that is not private (the
// examples are), in the root's order, which is dependency order.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** One publishable workspace. */
export interface PublishablePackage {
  /** Its folder, relative to the repository root. */
  dir: string
  name: string
  version: string
}

/** The publishable workspaces of the repository at `root`. */
export function publishablePackages(root: string): PublishablePackage[] {
  const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] }
  const out: PublishablePackage[] = []
  for (const dir of workspaces) {
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as { name: string; version: string; private?: boolean }
    if (pkg.private !== true) out.push({ dir, name: pkg.name, version: pkg.version })
  }
  return out
}

/** The file name `npm pack` gives a package's tarball (`@gate/sdk` 0.1.0 → gate-sdk-0.1.0.tgz). */
export function tarballName(pkg: Pick<PublishablePackage, 'name' | 'version'>): string {
  return `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`
}
