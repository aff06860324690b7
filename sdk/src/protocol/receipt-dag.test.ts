import t from 'tap'
import {
  canonicalJson,
  checkLineage,
  kernelIdOf,
  LogicalClock,
  parentSetHash,
  readLineage,
  ReceiptChain,
  sha256Hex,
  verifyLineage,
  type LineageFields,
  type LineageNode,
} from '../index.js'

const id = (n: number) => sha256Hex(`receipt-${n}`)

function chainOf(clockSeconds = 1_763_700_000): { chain: ReceiptChain; setNow: (s: number) => void } {
  let now = clockSeconds
  const clock = new LogicalClock('k1', () => now)
  return { chain: new ReceiptChain(clock, 'chain-a'), setNow: s => (now = s) }
}

t.test('parentSetHash is the SHA-256 of the canonical sorted, deduplicated ids', async t => {
  t.equal(parentSetHash([id(2), id(1), id(2)]), sha256Hex(canonicalJson([id(1), id(2)].sort())))
  t.equal(parentSetHash([]), sha256Hex('[]'))
  t.equal(kernelIdOf('ab'.repeat(32)).length, 16)
})

t.test('a session chain: the sampling round-trip and the next call name what they follow from', async t => {
  const { chain } = chainOf()
  const first = chain.beginCall()
  t.match(first.fields, { chainId: 'chain-a', parentReceiptIds: [], dagOrdinal: 0, hlc: { kernelId: 'k1', logical: 0 } })
  first.commit(id(1))
  // the tool's sampling request, recorded as a child of the call
  const child = chain.follow([id(1)])
  t.same(child.fields.parentReceiptIds, [id(1)])
  t.equal(child.fields.dagOrdinal, 1)
  child.commit(id(2))
  // the next call follows from the call and its child
  const next = chain.beginCall()
  t.same(next.fields.parentReceiptIds, [id(1), id(2)].sort())
  t.equal(next.fields.dagOrdinal, 2)
  t.equal(next.fields.parentSetHash, parentSetHash([id(1), id(2)]))
  next.commit(id(3))
  const after = chain.beginCall()
  t.same(after.fields.parentReceiptIds, [id(3)], 'the heads named by a call stop being heads')
  t.ok(after.fields.hlc.logical > next.fields.hlc.logical || after.fields.hlc.wallSeconds > next.fields.hlc.wallSeconds, 'the clock only moves forward')
})

t.test('calls in flight together are siblings; the next call names both; an abandoned one gives its heads back', async t => {
  const { chain } = chainOf()
  const root = chain.beginCall()
  root.commit(id(1))
  const a = chain.beginCall()
  const b = chain.beginCall()
  t.same(a.fields.parentReceiptIds, [id(1)])
  t.same(b.fields.parentReceiptIds, [], 'b started before a committed: a root of its own')
  a.commit(id(2))
  b.commit(id(3))
  const c = chain.beginCall()
  t.same(c.fields.parentReceiptIds, [id(2), id(3)].sort())
  c.abandon()
  t.same(chain.beginCall().fields.parentReceiptIds, [id(2), id(3)].sort(), 'not written: the heads are heads again')
  t.same(chain.follow(['f'.repeat(64)]).fields.parentReceiptIds, [], 'no known parent and no heads left: a root')
})

t.test('the clock never goes back, even when the wall clock does', async t => {
  const { chain, setNow } = chainOf(100)
  const a = chain.beginCall()
  a.commit(id(1))
  setNow(90)
  const b = chain.beginCall()
  t.same(b.fields.hlc, { wallSeconds: 100, logical: 1, kernelId: 'k1' })
  setNow(101)
  t.same(chain.beginCall().fields.hlc, { wallSeconds: 101, logical: 0, kernelId: 'k1' })
})

function receipt(fields: LineageFields): Record<string, unknown> {
  return { ...fields }
}

t.test('each rejection rule: the parent set, unknown parents, chains, ordinals, the shape', async t => {
  const parents = new Map<string, LineageNode>([
    [id(1), { id: id(1), chainId: 'chain-a', dagOrdinal: 0 }],
    [id(2), { id: id(2), chainId: 'chain-a', dagOrdinal: 3 }],
    [id(3), { id: id(3), chainId: 'chain-b', dagOrdinal: 0 }],
  ])
  const find = (x: string) => parents.get(x)
  const ids = [id(1), id(2)].sort()
  const good: LineageFields = { chainId: 'chain-a', parentReceiptIds: ids, parentSetHash: parentSetHash(ids), dagOrdinal: 4, hlc: { wallSeconds: 1, logical: 0, kernelId: 'k1' } }
  t.equal(checkLineage(receipt(good), find), undefined, 'a good child passes')
  t.match(checkLineage(receipt({ ...good, parentSetHash: parentSetHash([id(1)]) }), find), { rule: 'parent_set', detail: /not the hash/ }, 'a parent set hash that does not match')
  t.match(checkLineage(receipt({ ...good, parentReceiptIds: [...ids].reverse() }), find), { rule: 'parent_set', detail: /sorted/ }, 'unsorted parents')
  t.match(checkLineage(receipt({ ...good, parentReceiptIds: [ids[0]!, ids[0]!] }), find), { rule: 'parent_set' }, 'duplicated parents')
  const spanning = [id(1), id(3)].sort()
  t.match(checkLineage(receipt({ ...good, parentReceiptIds: spanning, parentSetHash: parentSetHash(spanning) }), find), { rule: 'chain' }, 'parents spanning chains')
  t.match(checkLineage(receipt({ ...good, chainId: 'chain-b' }), find), { rule: 'chain' }, 'a child on another chain than its parents')
  t.match(checkLineage(receipt({ ...good, dagOrdinal: 3 }), find), { rule: 'ordinal', detail: /does not exceed its parents' maximum 3/ }, 'an ordinal equal to a parent')
  t.match(checkLineage(receipt({ ...good, dagOrdinal: 1 }), find), { rule: 'ordinal' }, 'an ordinal below a parent')
  const unknown = [id(1), id(9)].sort()
  const withUnknown = receipt({ ...good, parentReceiptIds: unknown, parentSetHash: parentSetHash(unknown) })
  t.match(checkLineage(withUnknown, find), { rule: 'unknown_parent' })
  t.equal(checkLineage(withUnknown, find, { allowUnknown: true }), undefined, 'allowUnknown checks only the parents it finds')
  for (const [name, bad] of [
    ['no chainId', { ...good, chainId: '' }],
    ['a short parent id', { ...good, parentReceiptIds: ['ab'] }],
    ['a negative ordinal', { ...good, dagOrdinal: -1 }],
    ['a clock without kernelId', { ...good, hlc: { wallSeconds: 1, logical: 0 } }],
  ] as const) {
    t.match(readLineage(bad as unknown as Record<string, unknown>), { rule: 'shape' }, name)
  }
})

t.test('verifyLineage checks a whole chain; a member with a parent outside it fails', async t => {
  const { chain } = chainOf()
  const members: { id: string; receipt: Record<string, unknown> }[] = []
  const write = (pending: ReturnType<ReceiptChain['beginCall']>, n: number) => {
    members.push({ id: id(n), receipt: receipt(pending.fields) })
    pending.commit(id(n))
  }
  write(chain.beginCall(), 1)
  write(chain.follow([id(1)]), 2)
  write(chain.beginCall(), 3)
  t.match(verifyLineage(members), { ok: true, chainId: 'chain-a', problems: [] })
  t.match(verifyLineage(members.slice(1)), { ok: false, problems: [{ id: id(2), problem: { rule: 'unknown_parent' } }] })
  const other = new ReceiptChain(new LogicalClock('k1'), 'chain-b').beginCall()
  t.match(verifyLineage([...members, { id: id(4), receipt: receipt(other.fields) }]), { ok: false, problems: [{ id: id(4), problem: { rule: 'chain' } }] })
})
