// Generator configuration (spec 01, "Generator configuration"), validated at call time: unknown keys
// and wrong types are refused with a GateError naming the option.
import { InvalidConfigError } from '@gate/sdk'

/** Options of `toolsFromSpec` / `manifestFromSpec`. */
export interface GeneratorConfig {
  /** Identifier of the generated manifest (`server_id`). Default `openapi-server`. */
  serverId?: string
  /** Derive output schemas from 2xx responses. Default true. */
  includeOutputSchemas?: boolean
  /** Honour `x-gate-publish: false` by leaving the operation out of tools and manifest. Default true. */
  respectPublishFlag?: boolean
}

export type ResolvedGeneratorConfig = Readonly<Required<GeneratorConfig>>

export const GENERATOR_DEFAULTS: ResolvedGeneratorConfig = Object.freeze({
  serverId: 'openapi-server',
  includeOutputSchemas: true,
  respectPublishFlag: true,
})

const KNOWN = Object.keys(GENERATOR_DEFAULTS)
// The spec's snake_case names, accepted by no one but named in the error so the fix is obvious.
const SPEC_NAMES: Record<string, string> = {
  server_id: 'serverId',
  include_output_schemas: 'includeOutputSchemas',
  respect_publish_flag: 'respectPublishFlag',
}

/** Checks a GeneratorConfig and merges the defaults once. */
export function resolveGeneratorConfig(config: unknown): ResolvedGeneratorConfig {
  if (config === undefined) return GENERATOR_DEFAULTS
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new InvalidConfigError('generator config', 'an object', config)
  }
  const given = config as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (KNOWN.includes(key)) continue
    const renamed = SPEC_NAMES[key]
    if (renamed !== undefined) throw new InvalidConfigError(key, `spelled ${renamed}`, given[key])
    throw new InvalidConfigError(key, `left out: it is not a generator option (known: ${KNOWN.join(', ')})`, given[key])
  }
  const serverId = given.serverId ?? GENERATOR_DEFAULTS.serverId
  if (typeof serverId !== 'string' || serverId === '') throw new InvalidConfigError('serverId', 'a non-empty string', serverId)
  const includeOutputSchemas = given.includeOutputSchemas ?? GENERATOR_DEFAULTS.includeOutputSchemas
  if (typeof includeOutputSchemas !== 'boolean') {
    throw new InvalidConfigError('includeOutputSchemas', 'a boolean', includeOutputSchemas)
  }
  const respectPublishFlag = given.respectPublishFlag ?? GENERATOR_DEFAULTS.respectPublishFlag
  if (typeof respectPublishFlag !== 'boolean') throw new InvalidConfigError('respectPublishFlag', 'a boolean', respectPublishFlag)
  return Object.freeze({ serverId, includeOutputSchemas, respectPublishFlag })
}
