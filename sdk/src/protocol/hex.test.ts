// Hex helpers: strict lowercase decoding (a key or signature in any other spelling does not parse).
import t from 'tap'
import { bytesToHex, hexToBytes, isSha256Hex } from './hex.js'

t.test('hexToBytes decodes every byte value and round-trips with bytesToHex', async t => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i)
  const hex = bytesToHex(all)
  t.equal(hex.length, 512)
  t.same(hexToBytes(hex), all)
  t.same(hexToBytes(''), new Uint8Array(0))
})

t.test('hexToBytes refuses anything but even-length lowercase hex', async t => {
  for (const bad of ['0', 'abc', 'AB', '0G', 'zz', '0x00', ' 00', '00 ', '\u00e900', '0\u0660', 'ab\n']) {
    t.equal(hexToBytes(bad), undefined, JSON.stringify(bad))
  }
})

t.test('isSha256Hex: 64 lowercase hex digits only', async t => {
  t.ok(isSha256Hex('a'.repeat(64)))
  t.notOk(isSha256Hex('A'.repeat(64)))
  t.notOk(isSha256Hex('a'.repeat(63)))
  t.notOk(isSha256Hex(42))
})
