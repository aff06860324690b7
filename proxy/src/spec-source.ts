// Where the proxy's policy document comes from (startup step 2 of spec 01): the --spec file, else
// auto-discovery at the upstream. `--spec-sha256` pins the exact bytes either way; a discovered document
// otherwise lets the upstream decide its own policy, which the caller must log as a warning.
import { readFile } from 'node:fs/promises'
import { sha256Hex } from '@gate/sdk'
import { ProtectError } from './errors.js'
import type { PinnedEgressOptions } from './pinned-egress.js'
import { discoverSpec } from './spec-discovery.js'
import type { UpstreamTarget } from './upstream-url.js'

export interface SpecSourceOptions {
  /** --spec: a local OpenAPI document. */
  specPath?: string
  upstream: UpstreamTarget
  /** --spec-sha256: the expected SHA-256 hex of the document bytes. */
  expectedSha256?: string
  discovery?: PinnedEgressOptions
}

export interface SpecDocument {
  bytes: Buffer
  /** The file path or the URL it was discovered at. */
  source: string
  sha256: string
  /** True when the upstream served it (no --spec). */
  discovered: boolean
}

export async function loadSpecDocument(options: SpecSourceOptions): Promise<SpecDocument> {
  let bytes: Buffer
  let source: string
  const discovered = options.specPath === undefined
  if (options.specPath !== undefined) {
    source = options.specPath
    try {
      bytes = await readFile(options.specPath)
    } catch (err) {
      throw new ProtectError('SpecLoad', `cannot read --spec ${options.specPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
    }
  } else {
    const found = await discoverSpec(options.upstream, options.discovery)
    bytes = found.bytes
    source = found.url
  }
  const sha256 = sha256Hex(bytes)
  if (options.expectedSha256 !== undefined && options.expectedSha256.toLowerCase() !== sha256) {
    throw new ProtectError(
      'Config',
      `the OpenAPI document from ${source} has SHA-256 ${sha256}, but --spec-sha256 expects ${options.expectedSha256.toLowerCase()}; refusing to start`,
    )
  }
  return { bytes, source, sha256, discovered }
}
