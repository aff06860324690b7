// Property checks over the shared formats: hashes, statuses and the budget share.
import fc from 'fast-check'
import t from 'tap'
import { validate } from '../load.js'
import { capability, denyVerdict, hex, httpRequest, variant } from '../examples/values.js'

const hexChar = fc.constantFrom(...'0123456789abcdef')

t.test('body_hash accepts exactly 64 lowercase hex characters', async (t) => {
  fc.assert(
    fc.property(fc.array(hexChar, { minLength: 64, maxLength: 64 }), (chars) => {
      return validate('gate.http.request.v1', variant(httpRequest(), (v) => (v.body_hash = chars.join('')))).ok
    }),
  )
  fc.assert(
    fc.property(fc.array(hexChar, { minLength: 0, maxLength: 80 }).filter((chars) => chars.length !== 64), (chars) => {
      return !validate('gate.http.request.v1', variant(httpRequest(), (v) => (v.body_hash = chars.join('')))).ok
    }),
  )
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 63 }), fc.constantFrom(...'ABCDEFGXYZ-+ '), (index, bad) => {
      const value = hex(64).slice(0, index) + bad + hex(64).slice(index + 1)
      return !validate('gate.http.request.v1', variant(httpRequest(), (v) => (v.body_hash = value))).ok
    }),
  )
  t.pass('properties hold')
})

t.test('a deny http_status is accepted exactly within 100..599', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -1000, max: 2000 }), (status) => {
      const ok = validate('gate.http.verdict.v1', variant(denyVerdict(), (v) => (v.http_status = status))).ok
      return ok === (status >= 100 && status <= 599)
    }),
  )
  t.pass('property holds')
})

t.test('budget_share_bps is accepted exactly within 0..10000', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -20000, max: 20000 }), (bps) => {
      const ok = validate('gate.capability.v1', variant(capability(), (v) => (v.budget_share_bps = bps))).ok
      return ok === (bps >= 0 && bps <= 10000)
    }),
  )
  t.pass('property holds')
})
