// The `headers` member of GateHttpRequest: only the configured allow-list, never a credential header
// (spec 02: adapters must not include raw auth credential headers; options.ts refuses them up front).
import type { GateRequestInput } from './gate-types.js'

/** The allow-listed headers, repeated values joined with ", "; undefined when none (omitted from the wire). */
export function selectForwardHeaders(headers: GateRequestInput['headers'], allowList: readonly string[]): Record<string, string> | undefined {
  let out: Record<string, string> | undefined
  for (const name of allowList) {
    const value = headers[name]
    if (value === undefined) continue
    out ??= {}
    out[name] = typeof value === 'string' ? value : value.join(', ')
  }
  return out
}
