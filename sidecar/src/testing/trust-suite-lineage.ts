// The trust-control suite's receipt lineage (trust-serve-suite.ts), on each backend: a chain appended as
// tool and child receipts is answered by GET /v1/receipts/chain in DAG order and verified, named by its
// chainId or any of its receipts; a child breaking a DAG rule is refused and not stored. Receipts shipped
// to POST /v1/receipts/ingest keep the same rules against parents in the batch or the store: a batch
// with one breaking a rule is refused whole, naming the receipt and the rule; an unknown parent is
// accepted, and the chain shows it unverified.
import t from 'tap'
import { canonicalJson, parentSetHash, sha256Hex, uuidv7 } from '@gate/sdk'
import { call } from './http-client.js'
import type { TrustSuite } from './trust-suite-fixture.js'

export function registerTrustLineageTests(s: TrustSuite): void {
  t.test('receipt chain: tool and child receipts of one chain, verified, in DAG order; a broken lineage refused', async t => {
    const { SERVICE_TOKEN, signer, now, auth, toolReceipt } = s
    const chainId = `chain-${uuidv7()}`
    const lineage = (parents: string[], dagOrdinal: number, id = chainId) => ({
      chainId: id,
      parentReceiptIds: [...parents].sort(),
      parentSetHash: parentSetHash(parents),
      dagOrdinal,
      hlc: { wallSeconds: now, logical: dagOrdinal, kernelId: 'k'.repeat(16) },
    })
    const post = async (kind: 'tools' | 'children', body: unknown) => call(`${s.trust.url}/v1/receipts/${kind}`, { body, headers: auth(SERVICE_TOKEN) })
    // a child receipt, its id content-addressed over everything, `altered` members included
    const child = (parents: string[], dagOrdinal: number, id = chainId, altered: Record<string, unknown> = {}) => {
      const body = { session_id: 'mcp_1', parent_request_id: uuidv7(), request_id: uuidv7(), operation_kind: 'sampling/createMessage', terminal_state: 'completed', outcome_hash: 'a'.repeat(64), policy_hash: 'b'.repeat(64), ...lineage(parents, dagOrdinal, id), ...altered }
      return { id: sha256Hex(canonicalJson(body)), ...body }
    }

    const call1 = toolReceipt(signer, { tenant_id: 'acme', lineage: lineage([], 0) })
    t.equal((await post('tools', call1)).status, 200)
    const sampled = child([call1.id], 1)
    t.equal((await post('children', sampled)).status, 200)
    const call2 = toolReceipt(signer, { tenant_id: 'acme', lineage: lineage([call1.id, sampled.id], 2) })
    t.equal((await post('tools', call2)).status, 200)

    const chain = await call(`${s.trust.url}/v1/receipts/chain?receiptId=${sampled.id}`, { headers: auth(SERVICE_TOKEN) })
    t.equal(chain.status, 200)
    t.match(chain.body, { chainId, count: 3, truncated: false, verified: true, problems: [] })
    const body = chain.body as { receipts: { id: string }[]; children: { id: string }[] }
    t.same(body.receipts.map(r => r.id), [call1.id, call2.id], 'the tool receipts, in DAG order')
    t.same(body.children.map(r => r.id), [sampled.id])
    t.match((await call(`${s.trust.url}/v1/receipts/chain?chainId=${encodeURIComponent(chainId)}`, { headers: auth(SERVICE_TOKEN) })).body, { count: 3, verified: true })

    const elsewhere = child([], 0, `other-${chainId}`)
    t.equal((await post('children', elsewhere)).status, 200)
    const refused: [string, unknown, RegExp][] = [
      ['a parent set hash of another set', child([call2.id], 3, chainId, { parentSetHash: parentSetHash([call1.id]) }), /lineage parent_set/],
      ['parents across chains', child([call2.id, elsewhere.id], 3), /lineage chain/],
      ['an ordinal not above its parents\'', child([call2.id], 2), /lineage ordinal/],
      ['a tool receipt whose ordinal is not above its parent\'s', toolReceipt(signer, { tenant_id: 'acme', lineage: lineage([call2.id], 1) }), /lineage ordinal/],
    ]
    for (const [what, receipt, message] of refused) {
      const r = await post(what.startsWith('a tool') ? 'tools' : 'children', receipt)
      t.equal(r.status, 400, what)
      t.match(r.body, { error: message }, what)
    }
    t.match((await call(`${s.trust.url}/v1/receipts/chain?chainId=${encodeURIComponent(chainId)}`, { headers: auth(SERVICE_TOKEN) })).body, { count: 3, verified: true }, 'nothing refused was stored')
  })

  t.test('receipt ingest: lineage checked against the batch and the store; a broken rule refuses the batch', async t => {
    const { SERVICE_TOKEN, signer, now, auth, toolReceipt } = s
    const chainId = `ingest-chain-${uuidv7()}`
    const lineage = (parents: string[], dagOrdinal: number, id = chainId, altered: Record<string, unknown> = {}) => ({
      chainId: id,
      parentReceiptIds: [...new Set(parents)].sort(),
      parentSetHash: parentSetHash(parents),
      dagOrdinal,
      hlc: { wallSeconds: now, logical: dagOrdinal, kernelId: 'k'.repeat(16) },
      ...altered,
    })
    const tool = (l: Record<string, unknown>) => toolReceipt(signer, { tenant_id: 'acme', lineage: l })
    const ingest = (receipts: Record<string, unknown>[]) =>
      call(`${s.trust.url}/v1/receipts/ingest`, { body: { receipts: receipts.map(r => ({ coreReceipt: r, requestId: uuidv7() })) }, headers: auth(SERVICE_TOKEN) })
    const chain = async (id = chainId) => (await call(`${s.trust.url}/v1/receipts/chain?chainId=${encodeURIComponent(id)}`, { headers: auth(SERVICE_TOKEN) })).body as { count: number; verified: boolean; problems: { step: string }[] }

    // a root and its child in one batch (the child before its parent: the batch is read whole)
    const root = tool(lineage([], 0))
    const next = tool(lineage([root.id], 1))
    t.equal((await ingest([next, root])).status, 200, 'a parent in the same batch')
    // a parent stored by an earlier batch
    const third = tool(lineage([next.id, root.id], 2))
    t.equal((await ingest([third])).status, 200, 'parents in the store')
    t.match(await chain(), { count: 3, verified: true })
    const elsewhere = tool(lineage([], 0, `other-${chainId}`))
    t.equal((await ingest([elsewhere])).status, 200)

    const refused: [string, Record<string, unknown>, RegExp][] = [
      ['a parent set hash of another set', tool(lineage([third.id], 3, chainId, { parentSetHash: parentSetHash([root.id]) })), /lineage parent_set/],
      ['parents not sorted', tool(lineage([third.id, next.id], 3, chainId, { parentReceiptIds: [third.id, next.id].sort().reverse() })), /lineage parent_set/],
      ['parents across chains', tool(lineage([third.id, elsewhere.id], 3)), /lineage chain/],
      ['an ordinal not above a stored parent\'s', tool(lineage([third.id], 2)), /lineage ordinal/],
    ]
    for (const [what, bad] of refused) {
      // a valid receipt first: the refusal stores nothing of the batch
      const innocent = tool(lineage([third.id], 3))
      const r = await ingest([innocent, bad])
      t.equal(r.status, 400, what)
      t.match(r.body, { error: new RegExp(`receipts\\[1\\] \\(${bad.id}\\) rejected: ${refused.find(x => x[1] === bad)![2].source}.*nothing was stored`) }, what)
    }
    const inBatch = tool(lineage([], 5, `batch-${chainId}`))
    const r = await ingest([inBatch, tool(lineage([inBatch.id], 5, `batch-${chainId}`))])
    t.equal(r.status, 400, 'an ordinal not above a parent in the same batch')
    t.match(r.body, { error: /receipts\[1\] .* rejected: lineage ordinal/ })
    t.match(await chain(), { count: 3, verified: true }, 'nothing refused was stored')
    t.match(await chain(`batch-${chainId}`), { count: 0 })

    // a parent trust-control never received (a child receipt sidecars do not ship): accepted, the chain unverified
    const orphan = tool(lineage([third.id, 'c'.repeat(64)], 3))
    t.equal((await ingest([orphan])).status, 200, 'an unknown parent does not refuse the receipt')
    t.match(await chain(), { count: 4, verified: false, problems: [{ step: 'unknown_parent' }] })
  })
}
