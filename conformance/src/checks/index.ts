// Every check, in report order: one file per spec area.
import type { Check } from '../check.js'
import { CAPABILITY_CHECKS } from './capabilities.js'
import { CAPABILITY_FIELD_CHECKS } from './capability-fields.js'
import { CORE_RECEIPT_CHECKS } from './core-receipts.js'
import { EVALUATE_ERROR_CHECKS } from './evaluate-errors.js'
import { HEALTH_CHECKS } from './health.js'
import { HOSTILE_INPUT_CHECKS } from './hostile-input.js'
import { LIMIT_CHECKS } from './limits.js'
import { NONCE_CHECKS } from './nonces.js'
import { PROXY_CHECKS } from './proxy.js'
import { RECEIPT_CHECKS } from './receipts.js'
import { SDK_CHECKS } from './sdk-fail-closed.js'
import { SENSITIVITY_CHECKS } from './sensitivity.js'
import { TRANSPORT_CHECKS } from './transport.js'
import { VERDICT_MATRIX_CHECKS } from './verdict-matrix.js'
import { VERIFY_CHECKS } from './verify.js'

/** All checks with their run functions. */
export const ALL_CHECKS: readonly Check[] = Object.freeze([
  ...TRANSPORT_CHECKS,
  ...HEALTH_CHECKS,
  ...EVALUATE_ERROR_CHECKS,
  ...VERDICT_MATRIX_CHECKS,
  ...CAPABILITY_CHECKS,
  ...CAPABILITY_FIELD_CHECKS,
  ...SENSITIVITY_CHECKS,
  ...NONCE_CHECKS,
  ...RECEIPT_CHECKS,
  ...CORE_RECEIPT_CHECKS,
  ...VERIFY_CHECKS,
  ...LIMIT_CHECKS,
  ...HOSTILE_INPUT_CHECKS,
  ...PROXY_CHECKS,
  ...SDK_CHECKS,
])
