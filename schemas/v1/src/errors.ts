// The only place @gate/schemas' error codes appear. This package sits below @gate/sdk (which owns
// GateError), so it carries its own small base with the same readonly code and status; callers
// branch on err.code, never instanceof.

/** Base of the errors this package throws: a `gate_*` code and the HTTP status it maps to. */
export class SchemaError extends Error {
  readonly code: 'gate_bad_request' | 'gate_unknown_schema'
  readonly status: 400

  constructor(code: SchemaError['code'], message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'SchemaError'
    this.code = code
    this.status = 400
  }
}

/** A value failed its schema: answers 400 gate_bad_request. */
export class SchemaValidationError extends SchemaError {
  declare readonly code: 'gate_bad_request'
  readonly schemaId: string
  readonly errors: readonly string[]

  constructor(schemaId: string, errors: readonly string[]) {
    super('gate_bad_request', `value does not match ${schemaId}: ${errors.join('; ')}`)
    this.name = 'SchemaValidationError'
    this.schemaId = schemaId
    this.errors = Object.freeze([...errors])
  }
}

/**
 * A schema id this package does not ship. Fail closed (spec 03: unknown schema ids are rejected):
 * 400, because the id usually comes from a record's own `schema` member.
 */
export class UnknownSchemaError extends SchemaError {
  declare readonly code: 'gate_unknown_schema'
  readonly schemaId: string

  constructor(schemaId: unknown) {
    super('gate_unknown_schema', `unknown schema id ${JSON.stringify(String(schemaId))}`)
    this.name = 'UnknownSchemaError'
    this.schemaId = String(schemaId)
  }
}
