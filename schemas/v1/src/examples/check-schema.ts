// Table-driven schema checks: each good example must pass and each bad one fail at the expected
// JSON pointer, through both the runtime loader and the precompiled standalone validators, and
// validation must never change the value.
import t from 'tap'
import { validate } from '../load.js'
import type { SchemaId } from '../schema-ids.js'
import { validate as validateStandalone } from '../standalone.js'

export interface GoodExample {
  name: string
  value: unknown
}

export interface BadExample {
  name: string
  value: unknown
  /** The JSON pointer (or `(root)`) the first error must name. */
  at: string
}

/** Registers one test accepting every good example and one rejecting every bad example. */
export function checkSchema(id: SchemaId, good: readonly GoodExample[], bad: readonly BadExample[]): void {
  t.test(`${id} accepts every good example`, async (t) => {
    for (const { name, value } of good) {
      const before = JSON.stringify(value)
      const result = validate(id, value)
      t.same(result, { ok: true }, `accepts ${name}`)
      t.same(validateStandalone(id, value), result, `standalone agrees on ${name}`)
      t.equal(JSON.stringify(value), before, `validation leaves ${name} unchanged`)
    }
  })
  t.test(`${id} rejects every bad example`, async (t) => {
    for (const { name, value, at } of bad) {
      const result = validate(id, value)
      t.equal(result.ok, false, `rejects ${name}`)
      if (!result.ok) {
        t.ok(result.errors[0]?.startsWith(`${at}: `), `${name} fails at ${at}`, { errors: result.errors })
      }
      t.same(validateStandalone(id, value), result, `standalone agrees on ${name}`)
    }
  })
}
