// The edge's input check (spec: arguments that fail the tool's input_schema are denied before any
// upstream call): each tool's inputSchema is compiled once with ajv. Tool servers write draft-07 and
// draft 2020-12 schemas with keywords ajv's strict mode rejects, so this instance is lenient about
// unknown keywords and ignores `$schema`; a schema ajv cannot compile at all fails closed (every call
// of that tool is denied as arguments_invalid).
import { createRequire } from 'node:module'
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js'
import type formatsModule from 'ajv-formats'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'

const require = createRequire(import.meta.url)

export type InputProblem = { code: 'tool_unknown' | 'arguments_invalid'; reason: string }

export class InputCheck {
  readonly #ajv: Ajv2020
  readonly #compiled = new WeakMap<object, ValidateFunction | string>()

  constructor() {
    const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as { Ajv2020: new (options: object) => Ajv2020 }
    const addFormats = require('ajv-formats') as typeof formatsModule
    this.#ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false, coerceTypes: false, useDefaults: false, removeAdditional: false })
    addFormats.default(this.#ajv)
  }

  /** The problem with calling `tool` with `args`, or undefined when the arguments fit its schema. */
  check(serverId: string, name: string, tool: Tool | undefined, args: Record<string, unknown>): InputProblem | undefined {
    if (tool === undefined) return { code: 'tool_unknown', reason: `tool server ${serverId} has no tool ${JSON.stringify(name)}` }
    const validate = this.#validator(tool)
    if (typeof validate === 'string') return { code: 'arguments_invalid', reason: `the input_schema of ${name} cannot be compiled: ${validate}` }
    if (validate(args)) return undefined
    const first = validate.errors?.[0]
    const where = first === undefined || first.instancePath === '' ? 'arguments' : `arguments${first.instancePath}`
    return { code: 'arguments_invalid', reason: `${where} ${first?.message ?? 'do not match the input_schema'} (input_schema of ${name})` }
  }

  #validator(tool: Tool): ValidateFunction | string {
    const schema = tool.inputSchema as Record<string, unknown>
    let compiled = this.#compiled.get(schema)
    if (compiled === undefined) {
      const { $schema: _dialect, $id: _id, ...rest } = schema
      try {
        compiled = this.#ajv.compile(rest)
      } catch (err) {
        compiled = (err as Error).message
      }
      this.#compiled.set(schema, compiled)
    }
    return compiled
  }
}
