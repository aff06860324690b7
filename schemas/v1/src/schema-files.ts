// Reads the JSON schema files shipped at the package root (dist/ is one level below it).
import { readFileSync } from 'node:fs'
import type { SchemaObject } from 'ajv'
import { SCHEMA_IDS, type SchemaId } from './schema-ids.js'

/** The URL of the JSON file holding schema `id`. */
function schemaFileUrl(id: SchemaId): URL {
  return new URL(`../${id}.json`, import.meta.url)
}

/** Parses one schema file and deep-freezes it, so nobody can alter a schema ajv has compiled. */
function readSchemaFile(id: SchemaId): SchemaObject {
  return deepFreeze(JSON.parse(readFileSync(schemaFileUrl(id), 'utf8')) as SchemaObject)
}

/** Every shipped schema, keyed by id, in SCHEMA_IDS order. */
export function readAllSchemaFiles(): ReadonlyMap<SchemaId, SchemaObject> {
  return new Map(SCHEMA_IDS.map((id) => [id, readSchemaFile(id)]))
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
