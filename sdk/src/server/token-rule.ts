// The one rule every bearer token of Gate's own services keeps: the sidecar's and `gate api protect`'s
// control token, and trust-control's service and tenant tokens (docs/security.md). Checked once, where
// the token is configured, so a weak token stops the start instead of guarding anything.

/** The fewest characters a control or service token may have. */
export const MIN_TOKEN_LENGTH = 16

/** The rule in words, for messages: what a token must be and how to make one. */
export const TOKEN_RULE = `at least ${MIN_TOKEN_LENGTH} characters without whitespace (make one with: openssl rand -hex 16)`

/** True when `token` keeps the token rule. */
export function isStrongToken(token: unknown): token is string {
  return typeof token === 'string' && token.length >= MIN_TOKEN_LENGTH && !/\s/.test(token)
}
