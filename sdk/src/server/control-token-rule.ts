// The one rule for the bearer tokens of Gate's own services (the sidecar's and the proxy's control
// token, trust-control's service and tenant tokens): at least 16 visible ASCII characters, no
// whitespace, at most 1024. Checked once, where the token is configured, by every command alike.
import { InvalidConfigError } from '../errors.js'

export const MIN_CONTROL_TOKEN_LENGTH = 16
const CONTROL_TOKEN = /^[\x21-\x7e]{16,1024}$/

/** True when `token` meets the rule. */
export function isWellFormedControlToken(token: unknown): token is string {
  return typeof token === 'string' && CONTROL_TOKEN.test(token)
}

/** Throws InvalidConfigError naming `option` (never the token) unless `token` meets the rule. */
export function checkControlToken(token: unknown, option: string): string {
  if (!isWellFormedControlToken(token)) {
    throw new InvalidConfigError(option, `a token of at least ${MIN_CONTROL_TOKEN_LENGTH} characters (visible ASCII, no whitespace, at most 1024)`, '(redacted)')
  }
  return token
}
