// The JSON object body of a trust-control POST route: at most `limit` bytes, read by the project's one
// strict JSON reader (parseJsonBody), an object at the top, and for the fleet's routes checked against
// its schema; anything else is the caller's 400.
import type { IncomingMessage } from 'node:http'
import type { JsonReadOptions } from '@gate/sdk'
import { parseJsonBody, readBody } from '@gate/sdk/server'
import { TrustRequestError } from '../errors.js'
import { readFleetMessage, type FleetMessages } from '../fleet/fleet-messages.js'

/** Body-size limit of the POST routes (spec 03 leaves the value to the implementation). */
export const TRUST_POST_BODY_LIMIT = 64 * 1024

/** Reads a JSON object body of at most `limit` bytes (400 otherwise). */
export async function readJsonObject(req: IncomingMessage, limit: number = TRUST_POST_BODY_LIMIT, options: JsonReadOptions = {}): Promise<Record<string, unknown>> {
  const parsed = parseJsonBody(await readBody(req, limit), options)
  if (!parsed.ok) throw new TrustRequestError(parsed.problem)
  const value = parsed.value
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TrustRequestError('body must be a JSON object')
  return value as Record<string, unknown>
}

/** A fleet request's JSON body, checked against its schema (gate.fleet.*): 400 naming the first problem otherwise. */
export async function readFleetRequest<K extends keyof FleetMessages>(req: IncomingMessage, id: K, limit?: number, options?: JsonReadOptions): Promise<FleetMessages[K]> {
  const read = readFleetMessage(id, await readJsonObject(req, limit, options))
  if (!read.ok) throw new TrustRequestError(`body is ${read.problem}`)
  return read.value
}
