// GET /v1/internal/cluster/status (spec 03): the node's cluster view for its peers, behind the
// `gate.cluster.peer.v1` scheme (peer-auth.ts), never a bearer token.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import type { ClusterPort } from '../ports.js'
import { readQueryParameters } from '../query-params.js'

export function createClusterStatusRoute(deps: { cluster: ClusterPort }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      deps.cluster.authenticatePeer(req, url.pathname)
      readQueryParameters(url, [])
      sendJson(res, 200, await deps.cluster.internalStatus())
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}
