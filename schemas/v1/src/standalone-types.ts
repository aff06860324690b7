// Types shared by the edge entry point and the generated validators. Type-only ajv import.
import type { ErrorObject } from 'ajv'

/** A precompiled validator: returns true when valid, else sets `errors` (first error only). */
export interface StandaloneValidateFunction {
  (data: unknown): boolean
  errors?: ErrorObject[] | null
}
