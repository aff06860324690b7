// Receipts shipped by sidecars: POST /v1/receipts/ingest stores a batch of signed receipts (HttpReceipts,
// and the core-only receipts of tool calls), each validated against its schema, verified (id, signature)
// and signed by an enrolled key (or the authority's own) before anything is stored; one bad receipt
// refuses the whole batch with 400 and stores nothing. Idempotent by receipt id: a receipt stored before
// answers `stored: false` with its seq, so a sidecar retries safely. A receipt carrying lineage (spec 03
// "Receipt DAG") must also keep the DAG's rules against its parents, found in the store or in the same
// batch; a parent found in neither does not refuse it (docs/receipts.md, "Receipt lineage").
// POST /v1/keys/enroll enrols a sidecar's signing key; GET /v1/keys lists them. All need the service token.
// Request and response shapes: the gate.fleet.* schemas (fleet/fleet-messages.ts), checked on receipt.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { canonicalJson, checkHttpReceiptOffThread, type LineageNode, verifyCoreReceipt } from '@gate/sdk'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { TrustRequestError } from '../errors.js'
import type { FleetMessages, IngestRequestItem, IngestResponse, KeyListResponse } from '../fleet/fleet-messages.js'
import type { IngestItem, ReceiptIngestPort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { checkIncomingLineage, type LineageSources, nodeOf } from '../receipt-lineage.js'
import { signedCoreColumns, signedHttpColumns } from '../stores/receipt-columns.js'
import { readFleetRequest } from './json-body.js'

/** Body-size limit of an ingest batch: 8 MiB (about 3,000 receipts of 2.7 KB). */
export const INGEST_BODY_LIMIT = 8 * 1024 * 1024
// a full batch holds far more values than a request body's default allows; integers beyond 2^53 stay
// exact (bigint), as the signatures were made over them
const INGEST_JSON_LIMITS = { maxNodes: 2_000_000, bigIntegers: 'bigint' } as const

interface IngestDeps {
  auth: TrustAuthenticator
  ingest: ReceiptIngestPort
}

interface IngestRouteDeps extends IngestDeps {
  /** Where a shipped receipt's lineage parents are looked up. */
  lineage: LineageSources
}

export function createIngestRoute(deps: IngestRouteDeps) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'receipt ingest')
      readQueryParameters(url, [])
      const body = await readFleetRequest(req, 'gate.fleet.ingest_request.v1', INGEST_BODY_LIMIT, INGEST_JSON_LIMITS)
      const items = body.receipts.map((item, i) => toIngestItem(item, i))
      const signers = await deps.ingest.acceptedSigners([...new Set(items.map(i => i.receipt.kernel_key))])
      // every receipt verified before anything is stored
      const checks = await Promise.all(items.map(item => checkItem(item, signers)))
      checks.forEach((check, i) => {
        if (check.failedStep === null) return
        const detail = check.failedStep === 'signer' ? `its signer ${items[i]!.receipt.kernel_key} is not an enrolled key (POST /v1/keys/enroll)` : `${check.failedStep}: ${check.detail}`
        throw new TrustRequestError(`receipts[${i}] rejected: ${detail}; nothing was stored`)
      })
      await checkBatchLineage(deps.lineage, items)
      const results = await deps.ingest.ingest(items)
      const stored = results.filter(r => r.stored).length
      const answer: IngestResponse = {
        received: items.length,
        stored,
        duplicates: items.length - stored,
        results: results.map((r, i) => ({ receiptId: items[i]!.receipt.id, seq: r.seq, stored: r.stored })),
      }
      sendJson(res, 200, answer)
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
      const body = await readFleetRequest(req, 'gate.fleet.enroll_request.v1')
      const answer: FleetMessages['gate.fleet.enrolled_key.v1'] = await deps.ingest.enroll(body.publicKey, body.label)
      sendJson(res, 200, answer)
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
      const answer: KeyListResponse = { keys: await deps.ingest.enrolled() }
      sendJson(res, 200, answer)
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

// spec 03 Receipt DAG over a verified batch: each receipt carrying lineage has a matching parent set,
// parents on its chain and an ordinal above theirs, its parents read from the batch (any position:
// the outbox ships in commit order, but the order sent proves nothing) or else the store. A parent in
// neither is allowed: sidecars do not ship child receipts, so a call following a sampling request names
// a parent trust-control never holds; GET /v1/receipts/chain shows that chain unverified
// (unknown_parent) while the parent is missing.
async function checkBatchLineage(sources: LineageSources, items: readonly IngestItem[]): Promise<void> {
  const batch = new Map<string, LineageNode>()
  for (const item of items) {
    const node = nodeOf(item.receipt.id as string, item.receipt as unknown as Record<string, unknown>)
    if (node !== undefined) batch.set(node.id, node)
  }
  for (const [i, item] of items.entries()) {
    const problem = await checkIncomingLineage(sources, item.receipt as unknown as Record<string, unknown>, { allowUnknown: true, alsoKnown: batch })
    if (problem !== undefined) throw new TrustRequestError(`receipts[${i}] (${String(item.receipt.id)}) rejected: lineage ${problem.rule}: ${problem.detail}; nothing was stored`)
  }
}

// The checks a receipt passes before it is stored: the content-addressed id, the signature and the
// signer, for both forms (a core receipt of a trace or advisory kind is stored too: evidence, as signed).
async function checkItem(item: IngestItem, signers: Set<string>): Promise<{ failedStep: string | null; detail: string }> {
  // `json` is the receipt's canonical text: the check reads the signed bytes off it instead of serializing again
  if (item.form === 'http') return checkHttpReceiptOffThread(item.receipt, { trustedKeys: signers, receiptText: item.json })
  return verifyCoreReceipt(item.receipt, { trustedKeys: signers })
}

// The schema has checked every member's type; the item keeps the receipt's canonical text, which is what
// was signed and what is stored. The row's columns are read off the signed receipt alone (receipt-columns.ts),
// never taken as sent: a column the signature does not cover is one a query would filter on unproven (the
// audit compares them too). The sent members stay accepted for older senders and are ignored.
function toIngestItem(item: IngestRequestItem, i: number): IngestItem {
  const receipt = 'coreReceipt' in item ? item.coreReceipt : item.receipt
  let json: string
  try {
    json = canonicalJson(receipt)
  } catch (err) {
    throw new TrustRequestError(`receipts[${i}] has no canonical JSON form: ${(err as Error).message}`)
  }
  const signed = 'coreReceipt' in item ? signedCoreColumns(item.coreReceipt) : signedHttpColumns(item.receipt)
  const columns = {
    tenant: signed.tenant,
    subjectKey: signed.subjectKey,
    costUnits: signed.costUnits,
    costCurrency: signed.costCurrency,
    attemptedCostUnits: signed.attemptedCostUnits,
    kind: signed.kind,
    decisionReceiptId: signed.decisionReceiptId,
  }
  return 'coreReceipt' in item ? { form: 'core', receipt: item.coreReceipt, json, requestId: item.requestId, ...columns } : { form: 'http', receipt: item.receipt, json, ...columns }
}
