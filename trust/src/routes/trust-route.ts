// The shape of one trust-control route, in a module of its own so the route modules and the route
// table that mounts them can all name it without importing each other.
import type { IncomingMessage, ServerResponse } from 'node:http'

/** The handler shape of the host's router: `params` from `:name` segments, `url` parsed once. */
export type TrustHandler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL) => void | Promise<void>

export interface TrustRoute {
  method: 'GET' | 'POST'
  /** Literal path, or `:name` segments. */
  path: string
  handler: TrustHandler
}
