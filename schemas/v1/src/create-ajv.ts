// The one ajv configuration, shared by the runtime loader and the standalone generator so both
// compile the schemas identically.
import { Ajv2020, type Options, type SchemaObject } from 'ajv/dist/2020.js'
import formatsModule from 'ajv-formats'

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
export const AJV_OPTIONS: Readonly<Options> = Object.freeze({
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
  const ajv = new Ajv2020({ ...AJV_OPTIONS, ...extra })
  formatsModule.default(ajv)
  for (const schema of schemas) ajv.addSchema(schema)
  return ajv
}
