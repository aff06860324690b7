// GET /v1/receipts/chain (Gate's, admin only like the child receipt listing): the receipts of one
// receipt DAG chain (spec 03, docs/trust-control.md), named by `chainId` or by one of its receipts
// (`receiptId`), with `limit` (1..1000, default 500) per kind. Core receipts and child receipts are
// served exactly as stored, in DAG order (ordinal, then seq), with whether the lineage verifies: each
// receipt's own check and the DAG's rules; `problems` names each failure.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { NotFoundError } from '@gate/sdk'
import { sendJsonText, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { TrustRequestError } from '../errors.js'
import type { TrustAuthenticator } from '../ports.js'
import { readClamped, readQueryParameters, readText } from '../query-params.js'
import { chainIdOf, loadChain, type LineageSources } from '../receipt-lineage.js'

const LIMIT = Object.freeze({ min: 1, max: 1000, default: 500 })
const RECEIPT_ID = /^[0-9a-f]{64}$/

export function createReceiptChainRoute(deps: LineageSources & { auth: TrustAuthenticator }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'receipt chain')
      const values = readQueryParameters(url, ['chainId', 'receiptId', 'limit'])
      const named = readText(values, 'chainId')
      const receiptId = readText(values, 'receiptId')
      if ((named === undefined) === (receiptId === undefined)) throw new TrustRequestError('give exactly one of chainId or receiptId')
      if (receiptId !== undefined && !RECEIPT_ID.test(receiptId)) throw new TrustRequestError('receiptId must be 64 lowercase hex characters')
      const chainId = named ?? (await chainIdOf(deps, receiptId!))
      if (chainId === undefined) throw new NotFoundError(`receipt ${receiptId} is not stored here, or is on no chain`)
      const limit = readClamped(values, 'limit', LIMIT.min, LIMIT.max, LIMIT.default)
      const view = await loadChain(deps, chainId, limit)
      const raw = (kind: 'core' | 'child') => view.members.filter(m => m.kind === kind).map(m => m.json).join(',')
      sendJsonText(
        res,
        200,
        `{"chainId":${JSON.stringify(chainId)},"count":${view.members.length},"truncated":${view.truncated},"verified":${view.verified},` +
          `"problems":${JSON.stringify(view.problems)},"receipts":[${raw('core')}],"children":[${raw('child')}]}`,
      )
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}
