// The trust-control suite's receipt lineage (trust-serve-suite.ts), on each backend: a chain appended as
// tool and child receipts is answered by GET /v1/receipts/chain in DAG order and verified, named by its
// chainId or any of its receipts; a child breaking a DAG rule is refused and not stored.
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
}
