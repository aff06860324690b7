// The one ajv configuration, shared by the runtime loader and the standalone generator so both
// compile the schemas identically. ajv is required when the first instance is created, not when this
// module loads: `@gate/schemas` is imported by every `gate` command and most never validate, and
// loading ajv took a third of a command's start-up time.
import { createRequire } from 'node:module'
import type { Ajv2020, Options, SchemaObject } from 'ajv/dist/2020.js'
import type formatsModule from 'ajv-formats'

const require = createRequire(import.meta.url)

/**
 * - strict: every strict check on; schemas must be strict-clean.
 * - allowUnionTypes: the wire has string-or-integer-or-null ids (JSON-RPC).
 * - discriminator: tagged unions dispatch on their tag and report the one branch's error.
 * - allErrors off: stop at the first error. Bodies reach 10 MiB (spec 02), and collecting every error
 *   on hostile input costs time and memory for no gain.
 * - validateSchema off: checking each schema against the draft 2020-12 meta-schema at start-up cost
 *   ~150 ms (compiling the meta-schema); load.test.ts checks every shipped file against it instead.
 * - useDefaults, coerceTypes and removeAdditional stay off: validation never mutates a value.
 *   Receipts, nonces and frames are signed records preserved byte for byte (spec 03), so
 *   inserting verdict.http_status's default (403) would change what was signed.
 */
const AJV_OPTIONS: Readonly<Options> = Object.freeze({
  strict: true,
  allowUnionTypes: true,
  discriminator: true,
  allErrors: false,
  validateSchema: false,
  useDefaults: false,
  coerceTypes: false,
  removeAdditional: false,
})

/** A configured ajv instance with every given schema added (not yet compiled). */
export function createAjv(schemas: Iterable<SchemaObject>, extra: Options = {}): Ajv2020 {
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as { Ajv2020: new (options: Options) => Ajv2020 }
  const addFormats = require('ajv-formats') as typeof formatsModule
  const ajv = new Ajv({ ...AJV_OPTIONS, ...extra })
  addFormats.default(ajv)
  for (const schema of schemas) ajv.addSchema(schema)
  return ajv
}
