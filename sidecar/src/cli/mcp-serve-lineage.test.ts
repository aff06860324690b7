// End to end: the receipt lineage of an MCP session (spec 03, "Receipt DAG") through the real `gate mcp
// serve`. The agent calls the fixture's `consult` tool, which samples, elicits and lists roots during
// the call: the call's decision receipt and the child receipts of those requests are on the session's
// one chain, each child following the call, the next call following all of them. trust-control answers
// the chain (GET /v1/receipts/chain) verified, `gate receipt explain --lineage` prints the tree from
// either source, and a child receipt appended with a lineage that breaks a rule is refused. Over
// Streamable HTTP (`gate mcp serve-http`) each session has a chain of its own.
import t from 'tap'
import { canonicalJson, parentSetHash, sha256Hex, uuidv7, type CoreReceipt } from '@gate/sdk'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { gateFiles } from '../testing/gate-files.js'
import { startGateMcpHttp } from '../testing/mcp-http-session.js'
import { startGateMcp } from '../testing/mcp-session.js'
import { runGate } from '../testing/spawn-gate.js'
import { runSqlStatements } from '../testing/sql-statements.js'

const CONTROL_TOKEN = 'control-token-for-mcp-lineage-tests'
const CAPABILITIES = { sampling: {}, elicitation: {}, roots: { listChanged: true } }

type Lineage = { chainId: string; parentReceiptIds: string[]; parentSetHash: string; dagOrdinal: number; hlc: { wallSeconds: number; logical: number; kernelId: string } }
type Receipt = Record<string, unknown> & Lineage & { id: string }
interface ChainBody {
  chainId: string
  count: number
  verified: boolean
  problems: unknown[]
  receipts: (CoreReceipt & Lineage)[]
  children: (Receipt & { operation_kind: string })[]
}

const authorized = { authorization: `Bearer ${CONTROL_TOKEN}` }

t.test('gate mcp serve: a session with a sampling round-trip is one verified chain; a bad lineage is refused', async t => {
  const files = await gateFiles(t)
  const args = ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', '--allow-tool', 'consult', '--', process.execPath, FIXTURE_SERVER_PATH]
  const gate = await startGateMcp(t, args, { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN }, capabilities: { capabilities: CAPABILITIES } })
  gate.client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant' as const, content: { type: 'text' as const, text: 'yes' }, model: 'test-model' }))
  gate.client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept' as const, content: { agree: true } }))
  gate.client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }))
  await gate.client.callTool({ name: 'consult', arguments: { question: 'first' } })
  await gate.client.callTool({ name: 'consult', arguments: { question: 'second' } })

  const listed = await runGate(['receipt', 'list', '--receipt-db', files.db, '--admin-all', '--tool-name', 'consult'])
  const decisions = listed.stdout.trim().split('\n').map(line => JSON.parse(line) as CoreReceipt & Lineage)
  t.equal(decisions.length, 2)
  const [first, second] = [...decisions].sort((a, b) => a.dagOrdinal - b.dagOrdinal) as [CoreReceipt & Lineage, CoreReceipt & Lineage]

  const chainOf = async (query: string) => {
    const response = await fetch(`${gate.controlUrl}/v1/receipts/chain?${query}`, { headers: authorized })
    return { status: response.status, body: (await response.json()) as ChainBody }
  }
  const { status, body } = await chainOf(`receiptId=${first.id}`)
  t.equal(status, 200)
  t.match(body, { chainId: first.chainId, verified: true, problems: [], count: 8 }, 'two decisions and six child receipts, verified')
  t.same(body.receipts.map(r => r.id), [first.id, second.id], 'the decisions, in DAG order')
  t.match(first, { parentReceiptIds: [], dagOrdinal: 0 }, 'the session\'s first call is the root')
  const sampling = body.children.filter(c => c.operation_kind === 'sampling/createMessage')
  t.equal(sampling.length, 2, 'one sampling request per call')
  const ofFirst = body.children.filter(c => c.parentReceiptIds.includes(first.id))
  t.same(ofFirst.map(c => c.operation_kind), ['sampling/createMessage', 'elicitation/create', 'roots/list'], 'each request the first call made follows it')
  for (const child of ofFirst) {
    t.match(child, { chainId: first.chainId, parentReceiptIds: [first.id], parentSetHash: parentSetHash([first.id]), dagOrdinal: 1 })
    t.ok(child.hlc.wallSeconds > first.hlc.wallSeconds || child.hlc.logical > first.hlc.logical, 'its clock is after its parent\'s')
  }
  t.same(second.parentReceiptIds, [first.id, ...ofFirst.map(c => c.id)].sort(), 'the next call follows the call and the requests it made')
  t.equal(second.dagOrdinal, 2)
  t.same((await chainOf(`chainId=${encodeURIComponent(first.chainId)}`)).body.count, 8, 'named by its chainId too')
  t.equal((await chainOf(`receiptId=${'0'.repeat(64)}`)).status, 404)
  t.equal((await fetch(`${gate.controlUrl}/v1/receipts/chain?receiptId=${first.id}`)).status, 401, 'admin only')

  for (const source of [['--control-url', gate.controlUrl], ['--receipt-db', files.db]]) {
    const explained = await runGate(['receipt', 'explain', '--lineage', sampling[0]!.id, ...source], { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
    t.equal(explained.code, 0, `${source[0]}: ${explained.stderr}`)
    const lines = explained.stdout.split('\n')
    t.match(lines[0], `chain ${first.chainId}: 8 receipts, lineage verifies`)
    t.match(lines[1], `  - #0 ${first.id} decision allow fs/consult`)
    t.equal(lines[2], `    * #1 ${sampling[0]!.id} child sampling/createMessage completed`, 'the asked receipt, under the call that made it')
    t.match(explained.stdout, `      - #2 ${second.id} decision allow fs/consult\n`, 'the next call, under the requests it follows')
    t.match(explained.stdout, `(shown above)`, 'a receipt with several parents is drawn once')
  }

  // appending child receipts: each DAG rule refuses, before anything is stored
  const append = async (lineage: Partial<Lineage>) => {
    const { id: _id, ...base } = ofFirst[0]!
    const body = { ...base, request_id: uuidv7(), ...lineage }
    const response = await fetch(`${gate.controlUrl}/v1/receipts/children`, { method: 'POST', headers: { ...authorized, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as { error?: string; message?: string; receiptId?: string }, id: sha256Hex(canonicalJson(body)) }
  }
  const onChain = (parents: string[], dagOrdinal: number, chainId = first.chainId): Partial<Lineage> => ({ chainId, parentReceiptIds: parents, parentSetHash: parentSetHash(parents), dagOrdinal })
  const refusals: [string, Partial<Lineage>, RegExp][] = [
    ['a parent set hash of another set', { ...onChain([second.id], 3), parentSetHash: parentSetHash([first.id]) }, /lineage parent_set: parentSetHash is not the hash of parentReceiptIds/],
    ['parents not sorted', { ...onChain([second.id, first.id], 3), parentReceiptIds: [second.id, first.id].sort().reverse() }, /lineage parent_set: parentReceiptIds must be sorted and deduplicated/],
    ['an ordinal equal to its parent\'s', onChain([second.id], 2), /lineage ordinal: dagOrdinal 2 does not exceed its parents' maximum 2/],
    ['an ordinal below its parent\'s', onChain([first.id, second.id].sort(), 1), /lineage ordinal/],
    ['a parent not stored here', onChain(['f'.repeat(64)], 9), /lineage unknown_parent/],
  ]
  for (const [what, lineage, message] of refusals) {
    const refused = await append(lineage)
    t.equal(refused.status, 400, what)
    t.match(refused.body, { error: message }, what)
  }
  // a root on another chain is accepted; a child naming it and a parent on the session's chain is not
  const elsewhere = await append(onChain([], 0, 'another-session'))
  t.equal(elsewhere.status, 200)
  const across = await append(onChain([first.id, elsewhere.id].sort(), 3))
  t.equal(across.status, 400)
  t.match(across.body.error, /lineage chain: parent [0-9a-f]{64} is on chain "[^"]+", not "[^"]+": parents must share the receipt's chain/)
  const refusedIds = await fetch(`${gate.controlUrl}/v1/receipts/children?receiptId=${across.id}`, { headers: authorized })
  t.equal(((await refusedIds.json()) as { count: number }).count, 0, 'a refused receipt is not stored')

  const accepted = await append(onChain([second.id], 3))
  t.equal(accepted.status, 200, 'a lineage that keeps the rules is stored')
  const after = (await chainOf(`receiptId=${accepted.id}`)).body
  t.match(after, { verified: true, count: 9 }, JSON.stringify(after.problems))
  const explained = await runGate(['receipt', 'explain', '--lineage', accepted.id, '--control-url', gate.controlUrl], { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
  t.equal(explained.code, 0, explained.stderr)
  t.match(explained.stdout, `* #3 ${accepted.id} child sampling/createMessage completed`, 'a child appended without its id, under the id it was stored as')

  // a stored child moved under another parent: its content address no longer matches, and the tree says so
  const moved = sampling[1]!
  await runSqlStatements(files.db, [`UPDATE listed_receipts SET json = replace(json, '"parentReceiptIds":["', '"parentReceiptIds":["${first.id}","') WHERE receipt_id = '${moved.id}'`])
  const broken = await runGate(['receipt', 'explain', '--lineage', first.id, '--receipt-db', files.db])
  t.equal(broken.code, 1, 'a lineage that does not verify exits 1')
  t.match(broken.stdout, `chain ${first.chainId}: 9 receipts, lineage NOT verified`)
  t.match(broken.stdout, `problem: ${moved.id.slice(0, 16)}: receipt_id: id is not the SHA-256 of the canonical receipt without id`)
  t.match((await chainOf(`receiptId=${first.id}`)).body, { verified: false, problems: [{ receiptId: moved.id, step: 'receipt_id' }] }, 'trust-control says so too')
})

t.test('gate mcp serve-http: each session is a chain of its own, each verified', async t => {
  const files = await gateFiles(t)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH], {
    env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
  })
  const sessions = await Promise.all([gate.connect(), gate.connect()])
  for (const { client } of sessions) {
    await client.callTool({ name: 'echo', arguments: { text: 'one' } })
    await client.callTool({ name: 'echo', arguments: { text: 'two' } })
  }
  const listed = await runGate(['receipt', 'list', '--receipt-db', files.db, '--admin-all', '--tool-name', 'echo'])
  const decisions = listed.stdout.trim().split('\n').map(line => JSON.parse(line) as CoreReceipt & Lineage)
  t.equal(decisions.length, 4)
  const chains = new Set(decisions.map(d => d.chainId))
  t.equal(chains.size, 2, 'another session, another chain')
  for (const chainId of chains) {
    const response = await fetch(`${gate.controlUrl}/v1/receipts/chain?chainId=${encodeURIComponent(chainId)}`, { headers: authorized })
    const body = (await response.json()) as ChainBody
    t.match(body, { count: 2, verified: true }, 'two calls, verified')
    t.same(body.receipts[1]!.parentReceiptIds, [body.receipts[0]!.id], 'the second call follows the first of its own session only')
  }
})
