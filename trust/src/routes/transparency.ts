// The transparency log's routes (docs/transparency.md, Routes), behind the same control-token auth as
// the other /v1 receipt routes:
//   GET  /v1/receipts/{receipt_id}/proof[?treeSize=N]   inclusion proof (either principal; a tenant token
//                                                       proves only its own tenant's receipts)
//   GET  /v1/checkpoints[?after=N&limit=M]              signed checkpoint statements, ascending (admin)
//   GET  /v1/checkpoints/latest                         the newest statement (admin)
//   GET  /v1/checkpoints/status                         the log's status, `gate receipt health` (admin)
//   GET  /v1/checkpoints/consistency?first=&second=     consistency proof between two checkpoints (admin)
//   GET  /v1/checkpoints/{tree_size}                    one statement (admin)
//   POST /v1/checkpoints[?timeoutMs=N]                  flush: commit, catch up, checkpoint (admin)
// Checkpoints reveal the size of the whole log, so reading them is an admin surface; an inclusion
// proof carries one checkpoint, which a tenant may see for its own receipt.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { canonicalJson, NotFoundError } from '@gate/sdk'
import { sendJsonText, sendTrustError } from '@gate/sdk/server'
import { requireAdmin, requirePrincipal } from '../authorize.js'
import { InvalidQueryParameterError } from '../errors.js'
import type { ReceiptCorpusPort, TransparencyPort, TrustAuthenticator } from '../ports.js'
import { readClamped, readQueryParameters, readU64 } from '../query-params.js'
import type { TrustHandler, TrustRoute } from './trust-route.js'

// the route table's handler shape (declared again here so this module does not import the table)

interface TransparencyRouteDeps {
  auth: TrustAuthenticator
  corpus: ReceiptCorpusPort
  transparency: TransparencyPort | undefined
}

const RECEIPT_ID = /^[0-9a-f]{64}$/
/** Page size of GET /v1/checkpoints: default 100, clamped to 1..1000. */
export const CHECKPOINT_PAGE = Object.freeze({ default: 100, min: 1, max: 1000 })
/** POST /v1/checkpoints timeout: default 5000 ms (spec 03 upgrade step 4), clamped to 1..600000. */
export const FLUSH_TIMEOUT_MS = Object.freeze({ default: 5000, min: 1, max: 600_000 })

/** The transparency routes, each as [method, path, handler]. */
export function createTransparencyRoutes(deps: TransparencyRouteDeps): TrustRoute[] {
  const admin = (surface: string, body: (log: TransparencyPort, url: URL, params: Record<string, string>) => Promise<unknown>): TrustHandler =>
    async (req, res, params, url) => {
      try {
        requireAdmin(deps.auth, req, surface)
        send(res, await body(available(deps.transparency), url, params))
      } catch (err) {
        sendTrustError(res, err)
      }
    }
  return [
    { method: 'GET', path: '/v1/receipts/:receipt_id/proof', handler: createProofRoute(deps) },
    {
      method: 'GET',
      path: '/v1/checkpoints',
      handler: admin('checkpoint listing', async (log, url) => {
        const values = readQueryParameters(url, ['after', 'limit'])
        const after = safe('after', readU64(values, 'after') ?? 0n)
        const limit = readClamped(values, 'limit', CHECKPOINT_PAGE.min, CHECKPOINT_PAGE.max, CHECKPOINT_PAGE.default)
        const checkpoints = await log.checkpoints(after, limit)
        return { checkpoints, nextAfter: checkpoints.length === limit ? checkpoints[checkpoints.length - 1]!.tree_size : null }
      }),
    },
    {
      method: 'GET',
      path: '/v1/checkpoints/latest',
      handler: admin('checkpoint listing', async (log, url) => {
        readQueryParameters(url, [])
        const latest = (await log.status()).lastCheckpoint
        const statement = latest === null ? undefined : await log.checkpoint(latest.treeSize)
        if (statement === undefined) throw new NotFoundError('checkpoint (the log has none yet)')
        return statement
      }),
    },
    {
      method: 'GET',
      path: '/v1/checkpoints/status',
      handler: admin('transparency log status', async (log, url) => {
        readQueryParameters(url, [])
        return log.status()
      }),
    },
    {
      method: 'GET',
      path: '/v1/checkpoints/consistency',
      handler: admin('consistency proof', async (log, url) => {
        const values = readQueryParameters(url, ['first', 'second'])
        const first = readU64(values, 'first')
        const second = readU64(values, 'second')
        if (first === undefined || second === undefined) throw new InvalidQueryParameterError(first === undefined ? 'first' : 'second', 'a checkpoint tree size', '')
        return log.consistencyProof(safe('first', first), safe('second', second))
      }),
    },
    {
      method: 'GET',
      path: '/v1/checkpoints/:tree_size',
      handler: admin('checkpoint listing', async (log, url, params) => {
        readQueryParameters(url, [])
        const size = treeSizeParam(params.tree_size ?? '')
        const statement = await log.checkpoint(size)
        if (statement === undefined) throw new NotFoundError(`checkpoint of tree size ${size}`)
        return statement
      }),
    },
    {
      method: 'POST',
      path: '/v1/checkpoints',
      handler: admin('checkpoint creation', async (log, url) => {
        const values = readQueryParameters(url, ['timeoutMs'])
        const timeoutMs = readClamped(values, 'timeoutMs', FLUSH_TIMEOUT_MS.min, FLUSH_TIMEOUT_MS.max, FLUSH_TIMEOUT_MS.default)
        const result = await log.flush(timeoutMs)
        return { checkpoint: result.checkpoint ?? null, created: result.created }
      }),
    },
  ]
}

function createProofRoute(deps: TransparencyRouteDeps): TrustHandler {
  return async (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL): Promise<void> => {
    try {
      const principal = requirePrincipal(deps.auth, req)
      const values = readQueryParameters(url, ['treeSize'])
      const id = params.receipt_id ?? ''
      if (!RECEIPT_ID.test(id)) throw new InvalidQueryParameterError('receipt_id', '64 lowercase hex characters', id)
      const treeSize = readU64(values, 'treeSize')
      const log = available(deps.transparency)
      // same scoping as GET /v1/receipts/{id}: another tenant's receipt is not found
      if (principal.kind === 'tenant') {
        const row = await deps.corpus.getById(id)
        if (row === undefined || row.tenant !== principal.tenant) throw new NotFoundError(`receipt ${id}`)
      }
      send(res, await log.inclusionProof(id, treeSize === undefined ? undefined : safe('treeSize', treeSize)))
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

function available(log: TransparencyPort | undefined): TransparencyPort {
  if (log === undefined) throw new NotFoundError('transparency log (this service keeps receipts in memory, or runs with --no-transparency-log)')
  return log
}

function treeSizeParam(text: string): number {
  if (!/^[0-9]{1,16}$/.test(text)) throw new InvalidQueryParameterError('tree_size', 'a checkpoint tree size', text)
  return safe('tree_size', BigInt(text))
}

function safe(name: string, value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidQueryParameterError(name, `at most ${Number.MAX_SAFE_INTEGER}`, String(value))
  return Number(value)
}

// signed records are served as canonical JSON, byte for byte what was signed (plus the signature)
function send(res: ServerResponse, body: unknown): void {
  sendJsonText(res, 200, canonicalJson(body))
}
