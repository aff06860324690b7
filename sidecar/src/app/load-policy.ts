// Loads the policy document: its bytes (policy_hash is the SHA-256 of exactly these bytes), the route
// table and the tool count. Without a document the method rule applies and policy_hash is the
// SHA-256 of zero bytes.
import { readFile } from 'node:fs/promises'
import { sha256Hex } from '@gate/sdk'
import { routeTableFromSpec, type RouteTable, type RouteTableOptions } from '../openapi/index.js'
import { ConfigError } from '../errors.js'

export interface LoadedPolicy {
  routeTable: RouteTable | null
  policyHash: string
  routeCount: number
  source: string
}

export async function loadPolicyFile(path: string | undefined, options: RouteTableOptions = {}): Promise<LoadedPolicy> {
  if (path === undefined) return { routeTable: null, policyHash: sha256Hex(new Uint8Array(0)), routeCount: 0, source: 'method rule (no --spec)' }
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (err) {
    throw new ConfigError(`cannot read --spec ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  return policyFromBytes(bytes, path, options)
}

/** Builds the policy from document bytes (also used by the proxy's auto-discovery). */
export function policyFromBytes(bytes: Uint8Array, source: string, options: RouteTableOptions = {}): LoadedPolicy {
  const text = Buffer.from(bytes).toString('utf8')
  const routeTable = routeTableFromSpec(text, options)
  return { routeTable, policyHash: sha256Hex(bytes), routeCount: routeTable.routes.length, source }
}
