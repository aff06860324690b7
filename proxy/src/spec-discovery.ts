// Spec auto-discovery (spec 01): without --spec, GET `{upstream}/openapi.json`, `/openapi.yaml`,
// `/swagger.json`, `/api-docs` in that order through the pinned egress client; the first 2xx with a
// non-empty body wins. When none does, `SpecLoad` lists what each probe got and points at --spec.
import { EGRESS_DEFAULTS, PinnedEgress, type PinnedEgressOptions } from './pinned-egress.js'
import { ProtectError } from './errors.js'
import type { UpstreamTarget } from './upstream-url.js'

export const DISCOVERY_PATHS: readonly string[] = Object.freeze(['/openapi.json', '/openapi.yaml', '/swagger.json', '/api-docs'])

export interface DiscoveredSpec {
  bytes: Buffer
  /** The URL that served the document. */
  url: string
}

export async function discoverSpec(upstream: UpstreamTarget, options: PinnedEgressOptions = EGRESS_DEFAULTS): Promise<DiscoveredSpec> {
  const egress = new PinnedEgress(upstream.origin, options)
  const attempts: string[] = []
  try {
    for (const probe of DISCOVERY_PATHS) {
      const url = `${upstream.origin}${upstream.basePath}${probe}`
      try {
        const r = await egress.get(url)
        if (r.status >= 200 && r.status <= 299 && r.body.length > 0) return { bytes: r.body, url: r.url }
        attempts.push(`${probe}: ${r.status}${r.status >= 200 && r.status <= 299 ? ' with an empty body' : ''}`)
      } catch (err) {
        attempts.push(`${probe}: ${(err as Error).message}`)
      }
    }
  } finally {
    await egress.close()
  }
  throw new ProtectError(
    'SpecLoad',
    `no OpenAPI document found at ${upstream.href} (${attempts.join('; ')}); pass the document with --spec PATH`,
  )
}
