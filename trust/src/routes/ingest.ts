// Receipts shipped by sidecars: POST /v1/receipts/ingest stores a batch of signed HttpReceipts, each
// verified (shape, id, signature) and signed by an enrolled key (or the authority's own) before anything
// is stored; one bad receipt refuses the whole batch with 400 and stores nothing. Idempotent by receipt
// id: a receipt stored before answers `stored: false` with its seq, so a sidecar retries safely.
// POST /v1/keys/enroll enrols a sidecar's signing key; GET /v1/keys lists them. All need the service token.
// Request and response shapes: docs/postgres.md.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { canonicalJson, checkHttpReceiptOffThread, type HttpReceipt } from '@gate/sdk'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { TrustRequestError } from '../errors.js'
import type { IngestItem, ReceiptIngestPort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { readJsonObject } from './json-body.js'

/** Body-size limit of an ingest batch: 8 MiB (about 3,000 receipts of 2.7 KB). */
export const INGEST_BODY_LIMIT = 8 * 1024 * 1024
/** Most receipts in one batch. */
export const INGEST_MAX_RECEIPTS = 1000
// a full batch holds far more values than a request body's default allows; integers beyond 2^53 stay
// exact (bigint), as the signatures were made over them
const INGEST_JSON_LIMITS = { maxNodes: 2_000_000, bigIntegers: 'bigint' } as const

const ITEM_KEYS = new Set(['receipt', 'tenant', 'subjectKey', 'costUnits', 'costCurrency', 'attemptedCostUnits', 'kind', 'decisionReceiptId'])
const CURRENCY = /^[A-Z]{3}$/

interface IngestDeps {
  auth: TrustAuthenticator
  ingest: ReceiptIngestPort
}

export function createIngestRoute(deps: IngestDeps) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'receipt ingest')
      readQueryParameters(url, [])
      const body = await readJsonObject(req, INGEST_BODY_LIMIT, INGEST_JSON_LIMITS)
      const list = body.receipts
      if (!Array.isArray(list) || list.length === 0 || list.length > INGEST_MAX_RECEIPTS) throw new TrustRequestError(`receipts must be an array of 1 to ${INGEST_MAX_RECEIPTS} items`)
      for (const key of Object.keys(body)) if (key !== 'receipts') throw new TrustRequestError(`unknown member ${JSON.stringify(key)}`)
      const items = list.map((item, i) => readItem(item, i))
      const signers = await deps.ingest.acceptedSigners([...new Set(items.map(i => i.receipt.kernel_key))])
      // every receipt verified before anything is stored
      const checks = await Promise.all(items.map(item => checkHttpReceiptOffThread(item.receipt, { trustedKeys: signers })))
      checks.forEach((check, i) => {
        if (check.failedStep === null) return
        const detail = check.failedStep === 'signer' ? `its signer ${items[i]!.receipt.kernel_key} is not an enrolled key (POST /v1/keys/enroll)` : `${check.failedStep}: ${check.detail}`
        throw new TrustRequestError(`receipts[${i}] rejected: ${detail}; nothing was stored`)
      })
      const results = await deps.ingest.ingest(items)
      const stored = results.filter(r => r.stored).length
      sendJson(res, 200, {
        received: items.length,
        stored,
        duplicates: items.length - stored,
        results: results.map((r, i) => ({ receiptId: items[i]!.receipt.id, seq: r.seq, stored: r.stored })),
      })
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

export function createEnrollRoute(deps: IngestDeps) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'key enrolment')
      readQueryParameters(url, [])
      const body = await readJsonObject(req)
      for (const key of Object.keys(body)) if (key !== 'publicKey' && key !== 'label') throw new TrustRequestError(`unknown member ${JSON.stringify(key)}`)
      if (typeof body.publicKey !== 'string') throw new TrustRequestError('publicKey must be a hex Ed25519 public key (64 lowercase hex characters)')
      if (typeof body.label !== 'string') throw new TrustRequestError('label must be a string naming the key\'s owner (1-128 printable ASCII characters)')
      sendJson(res, 200, await deps.ingest.enroll(body.publicKey, body.label))
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

export function createListKeysRoute(deps: IngestDeps) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'key listing')
      readQueryParameters(url, [])
      sendJson(res, 200, { keys: await deps.ingest.enrolled() })
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

function readItem(value: unknown, i: number): IngestItem {
  const at = `receipts[${i}]`
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TrustRequestError(`${at} must be an object`)
  const item = value as Record<string, unknown>
  for (const key of Object.keys(item)) if (!ITEM_KEYS.has(key)) throw new TrustRequestError(`${at} has an unknown member ${JSON.stringify(key)}`)
  const receipt = item.receipt
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) throw new TrustRequestError(`${at}.receipt must be a signed HttpReceipt object`)
  const r = receipt as HttpReceipt
  if (typeof r.kernel_key !== 'string' || typeof r.id !== 'string') throw new TrustRequestError(`${at}.receipt must be a signed HttpReceipt (id, kernel_key, signature)`)
  let json: string
  try {
    json = canonicalJson(receipt)
  } catch (err) {
    throw new TrustRequestError(`${at}.receipt has no canonical JSON form: ${(err as Error).message}`)
  }
  const text = (key: string): string | null => {
    const v = item[key]
    if (v === undefined || v === null) return null
    if (typeof v !== 'string' || v === '' || v.length > 256) throw new TrustRequestError(`${at}.${key} must be a non-empty string or null`)
    return v
  }
  const units = (key: string): number | null => {
    const v = item[key]
    if (v === undefined || v === null) return null
    if (!Number.isSafeInteger(v) || (v as number) < 0) throw new TrustRequestError(`${at}.${key} must be a non-negative integer or null`)
    return v as number
  }
  const kind = item.kind
  if (kind !== undefined && kind !== 'decision' && kind !== 'final') throw new TrustRequestError(`${at}.kind must be decision or final`)
  const costCurrency = text('costCurrency')
  if (costCurrency !== null && !CURRENCY.test(costCurrency)) throw new TrustRequestError(`${at}.costCurrency must be three uppercase ASCII letters`)
  return {
    receipt: r,
    json,
    tenant: text('tenant'),
    subjectKey: text('subjectKey'),
    costUnits: units('costUnits'),
    costCurrency,
    attemptedCostUnits: units('attemptedCostUnits'),
    kind: kind as IngestItem['kind'],
    decisionReceiptId: text('decisionReceiptId'),
  }
}
