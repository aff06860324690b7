// The fleet flags of `gate sidecar` and `gate api protect` (docs/fleet.md): --control-url connects the
// service to a central trust-control, authenticated by the fleet's control token (GATE_CONTROL_TOKEN),
// over TLS with --control-ca for a private CA; --max-revocation-staleness bounds how old the mirrored
// revocations may be before requests presenting a capability fail closed.
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { ConfigError, UsageError } from '../errors.js'
import type { GlobalFlags } from './global-flags.js'

export const FLEET_FLAG_OPTIONS = {
  'control-ca': { type: 'string' },
  'max-revocation-staleness': { type: 'string' },
} as const

/** Defaults of the fleet settings. */
export const FLEET_DEFAULTS = Object.freeze({
  /** --max-revocation-staleness, seconds: six missed 5 s rounds of the revocation feed. */
  maxRevocationStalenessSeconds: 30,
})

export const FLEET_FLAGS_HELP = `Fleet (docs/fleet.md):
  --control-url URL           connect to trust-control (gate trust serve): follow its authority, mirror its
                              revocations (revocation_backend: remote), enrol this signing key, ship
                              receipts from a durable outbox, capture budgets centrally. The token is
                              GATE_CONTROL_TOKEN (else --control-token / --control-token-file); https
                              is required unless the host is a loopback address
  --control-ca FILE           PEM CA bundle that signs trust-control's certificate (a private CA)
  --max-revocation-staleness SECS
                              requests presenting a capability are denied (reason_code
                              revocation_state_stale) once the mirrored revocations are older than this
                              (default ${FLEET_DEFAULTS.maxRevocationStalenessSeconds}); everything else keeps working`

/** What a service connected to trust-control needs; undefined when --control-url is absent. */
export interface FleetSettings {
  controlUrl: URL
  /** PEM of --control-ca. */
  ca: string | undefined
  maxRevocationStalenessMs: number
}

/** Reads the fleet flags; the control token is checked by the caller (it owns the token sources). */
export function readFleetFlags(values: Record<string, unknown>, global: GlobalFlags): FleetSettings | undefined {
  const caPath = values['control-ca'] as string | undefined
  const staleness = values['max-revocation-staleness']
  if (global.controlUrl === undefined) {
    if (caPath !== undefined) throw new UsageError('--control-ca needs --control-url')
    if (staleness !== undefined) throw new UsageError('--max-revocation-staleness needs --control-url')
    return undefined
  }
  let url: URL
  try {
    url = new URL(global.controlUrl)
  } catch {
    throw new UsageError(`--control-url must be an http(s) URL, got "${global.controlUrl}"`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`--control-url must be http or https, got ${url.protocol}`)
  // spec 03, Authentication 5: remote trust-control HTTP requires TLS
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) throw new UsageError(`--control-url ${url.origin} is plaintext to a remote host: use https (spec 03 requires TLS to a remote trust-control)`)
  if (url.username !== '' || url.password !== '') throw new UsageError('--control-url must not carry credentials: give the token in GATE_CONTROL_TOKEN')
  let ca: string | undefined
  if (caPath !== undefined) {
    if (url.protocol !== 'https:') throw new UsageError('--control-ca needs an https --control-url')
    try {
      ca = readFileSync(caPath, 'utf8')
    } catch (err) {
      throw new ConfigError(`cannot read --control-ca ${caPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`--control-ca ${caPath} holds no PEM certificate`)
  }
  let seconds: number = FLEET_DEFAULTS.maxRevocationStalenessSeconds
  if (staleness !== undefined) {
    seconds = Number(staleness)
    if (typeof staleness !== 'string' || !/^\d+$/.test(staleness) || seconds < 1 || seconds > 3600) throw new UsageError(`--max-revocation-staleness must be whole seconds from 1 to 3600, got "${String(staleness)}"`)
  }
  return { controlUrl: url, ca, maxRevocationStalenessMs: seconds * 1000 }
}

function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === 'localhost') return true
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1'
}
