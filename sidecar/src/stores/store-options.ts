// Splits a store's options into its own keys and the shared `DatabaseOptions`, refusing unknown keys at
// open (never on the first write), with a message naming the option and what is accepted.
import { InvalidConfigError } from '@gate/sdk'
import { DATABASE_DEFAULTS, type DatabaseOptions } from './sqlite-driver.js'

/** The store's own options and the database options, after refusing unknown keys. */
export function pickOptions<T extends DatabaseOptions, K extends keyof T>(
  optionName: string,
  options: T | undefined,
  ownKeys: readonly K[],
): { own: Partial<Pick<T, K>>; database: DatabaseOptions } {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new InvalidConfigError(optionName, 'an object', options)
  }
  const own: Partial<Pick<T, K>> = {}
  const database: Record<string, unknown> = {}
  const databaseKeys = Object.keys(DATABASE_DEFAULTS)
  for (const [key, value] of Object.entries(options ?? {})) {
    if (value === undefined) continue
    if ((ownKeys as readonly PropertyKey[]).includes(key)) (own as Record<string, unknown>)[key] = value
    else if (databaseKeys.includes(key)) database[key] = value
    else {
      throw new InvalidConfigError(`${optionName}.${key}`, `one of ${[...ownKeys.map(String), ...databaseKeys].join(', ')} (unknown option)`, key)
    }
  }
  return { own, database: database as DatabaseOptions }
}

/** The default store clock: Unix seconds. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000)
}

/** Checks an optional hook or clock option is a function. */
export function checkFunctionOption(optionName: string, value: unknown, required = false): void {
  if (value === undefined && !required) return
  if (typeof value !== 'function') throw new InvalidConfigError(optionName, 'a function', value)
}
