// Receipts shipped by sidecars: POST /v1/receipts/ingest stores a batch of signed receipts (HttpReceipts,
// and the core-only receipts of tool calls), each validated against its schema, verified (id, signature)
// and signed by an enrolled key (or the authority's own) before anything is stored; one bad receipt
// refuses the whole batch with 400 and stores nothing. Idempotent by receipt id: a receipt stored before
// answers `stored: false` with its seq, so a sidecar retries safely.
// POST /v1/keys/enroll enrols a sidecar's signing key; GET /v1/keys lists them. All need the service token.
// Request and response shapes: docs/postgres.md.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { validate } from '@gate/schemas'
import { canonicalJson, checkHttpReceiptOffThread, verifyCoreReceipt, type CoreReceipt, type HttpReceipt } from '@gate/sdk'
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

const COLUMN_KEYS = ['tenant', 'subjectKey', 'costUnits', 'costCurrency', 'attemptedCostUnits', 'kind', 'decisionReceiptId']
// an HttpReceipt carries its request id; a core receipt does not, so its item names it
const HTTP_ITEM_KEYS = new Set(['receipt', ...COLUMN_KEYS])
const CORE_ITEM_KEYS = new Set(['coreReceipt', 'requestId', ...COLUMN_KEYS])
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
      const checks = await Promise.all(items.map(item => checkItem(item, signers)))
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

// The checks a receipt passes before it is stored: the content-addressed id, the signature and the
// signer, for both forms (a core receipt of a trace or advisory kind is stored too: evidence, as signed).
async function checkItem(item: IngestItem, signers: Set<string>): Promise<{ failedStep: string | null; detail: string }> {
  // `json` is the receipt's canonical text: the check reads the signed bytes off it instead of serializing again
  if (item.form === 'http') return checkHttpReceiptOffThread(item.receipt, { trustedKeys: signers, receiptText: item.json })
  return verifyCoreReceipt(item.receipt, { trustedKeys: signers })
}

function readItem(value: unknown, i: number): IngestItem {
  const at = `receipts[${i}]`
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TrustRequestError(`${at} must be an object`)
  const item = value as Record<string, unknown>
  const core = 'coreReceipt' in item
  if (core && 'receipt' in item) throw new TrustRequestError(`${at} must carry one of receipt (an HttpReceipt) or coreReceipt (a gate.receipt.v1), not both`)
  const keys = core ? CORE_ITEM_KEYS : HTTP_ITEM_KEYS
  for (const key of Object.keys(item)) {
    if (!keys.has(key)) throw new TrustRequestError(`${at} has an unknown member ${JSON.stringify(key)}${key === 'requestId' ? ' (only a coreReceipt item names its request id)' : ''}`)
  }
  const member = core ? 'coreReceipt' : 'receipt'
  const receipt = item[member]
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) throw new TrustRequestError(`${at}.${member} must be a signed ${core ? 'gate.receipt.v1' : 'HttpReceipt'} object`)
  // the schema first: the row's columns are read from the receipt, so its members must have their types
  const schema = core ? 'gate.receipt.v1' : 'gate.http.receipt.v1'
  const valid = validate(schema, receipt)
  if (!valid.ok) throw new TrustRequestError(`${at}.${member} is not a ${schema}: ${valid.errors.slice(0, 3).join('; ')}`)
  let json: string
  try {
    json = canonicalJson(receipt)
  } catch (err) {
    throw new TrustRequestError(`${at}.${member} has no canonical JSON form: ${(err as Error).message}`)
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
  const columns = {
    tenant: text('tenant'),
    subjectKey: text('subjectKey'),
    costUnits: units('costUnits'),
    costCurrency,
    attemptedCostUnits: units('attemptedCostUnits'),
    kind: kind as IngestItem['kind'],
    decisionReceiptId: text('decisionReceiptId'),
  }
  if (!core) return { form: 'http', receipt: receipt as HttpReceipt, json, ...columns }
  const requestId = text('requestId')
  if (requestId === null) throw new TrustRequestError(`${at}.requestId is required with a coreReceipt (the tool call's request id)`)
  return { form: 'core', receipt: receipt as CoreReceipt, json, requestId, ...columns }
}
