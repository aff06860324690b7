// The conversion pipeline of spec 01, in its order: parse, extract operations (path order, `$ref`s
// resolved, parameters merged), read `x-gate-*`, classify, generate tools. Every entry point
// (tools, manifest, route table, `gate check`) runs this one pass, so a document is valid or invalid
// the same way whichever view is asked for.
import { createHash } from 'node:crypto'
import { OpenApiError } from './errors.js'
import { buildToolDefinition } from './build-tool-definition.js'
import { classifyPolicy } from './classify-policy.js'
import { SchemaExpander } from './expand-schema.js'
import { extractOperations, type ExtractedParameter } from './extract-operations.js'
import { resolveGeneratorConfig, type GeneratorConfig, type ResolvedGeneratorConfig } from './generator-config.js'
import { parseDocument } from './parse-document.js'
import { readExtensions } from './read-extensions.js'
import { RefResolver } from './resolve-refs.js'
import { selectRequestBody } from './select-schemas.js'
import type { GateExtensions, HttpMethod, OperationCall, PolicyClassification, ToolDefinition } from './types.js'

/** One operation after conversion. */
export interface ConvertedOperation {
  method: HttpMethod
  path: string
  operationId: string | undefined
  extensions: GateExtensions
  policy: PolicyClassification
  /** False when the config honours `x-gate-publish: false` and the operation set it. */
  published: boolean
  tool: ToolDefinition
  /** How a call of the tool becomes this operation's HTTP request. */
  call: OperationCall
}

/** A converted document: its manifest header fields and every operation. */
export interface SpecConversion {
  config: ResolvedGeneratorConfig
  title: string
  version: string
  description: string | undefined
  /** SHA-256 (hex) of the input's UTF-8 bytes. */
  policyHash: string
  operations: ConvertedOperation[]
}

/** Parses and converts one OpenAPI 3.x document; throws OpenApiError (or InvalidConfigError). */
export function convertSpec(input: string, config?: GeneratorConfig): SpecConversion {
  const resolved = resolveGeneratorConfig(config)
  const doc = parseDocument(input)
  const resolver = new RefResolver(doc.root)
  const expander = new SchemaExpander(resolver)
  // Tools are addressed by name (and OpenAPI requires unique operationIds): a clash is refused rather
  // than renamed, so a tool name always equals the document's operationId.
  const owners = new Map<string, string>()
  const operations = extractOperations(doc, resolver).map((op): ConvertedOperation => {
    const extensions = readExtensions(op.operation, doc.exactBudgets, op.location)
    const id = op.operation.operationId
    const body = selectRequestBody(op.operation, resolver, op.location)
    const tool = buildToolDefinition(op, body, extensions, expander, resolver, resolved)
    const owner = owners.get(tool.name)
    if (owner !== undefined) {
      throw new OpenApiError('InvalidSpec', `${op.location}.operationId`, `tool name ${JSON.stringify(tool.name)} is already used by ${owner}`)
    }
    owners.set(tool.name, op.location)
    return {
      method: op.method,
      path: op.path,
      operationId: typeof id === 'string' && id !== '' ? id : undefined,
      extensions,
      policy: classifyPolicy(op.method, extensions),
      published: !resolved.respectPublishFlag || extensions.publish,
      tool,
      call: {
        method: op.method,
        path: op.path,
        parameters: callParameters(op.parameters, body !== undefined),
        ...(body === undefined ? {} : { body: { mediaType: body.mediaType, required: body.required } }),
      },
    }
  })
  return {
    config: resolved,
    title: doc.title,
    version: doc.version,
    description: doc.description,
    policyHash: createHash('sha256').update(input, 'utf8').digest('hex'),
    operations,
  }
}

// The input schema's parameter properties, by location: a later parameter of the same name replaces an
// earlier one, and the body (last) replaces a parameter named body, as in build-input-schema.ts.
function callParameters(parameters: readonly ExtractedParameter[], hasBody: boolean): OperationCall['parameters'] {
  const byName = new Map<string, 'path' | 'query'>()
  for (const p of parameters) if (p.in === 'path' || p.in === 'query') byName.set(p.name, p.in)
  if (hasBody) byName.delete('body')
  return [...byName].map(([name, where]) => ({ name, in: where }))
}
