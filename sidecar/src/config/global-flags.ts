// The global flags of spec 01 ("Global flags passed through"), shared by `gate sidecar`,
// `gate api protect`, `gate trust serve` and the client subcommands, parsed into one shape.
import type { ParseArgsConfig } from 'node:util'

export const GLOBAL_FLAG_OPTIONS = {
  'authority-seed-file': { type: 'string' },
  'receipt-db': { type: 'string' },
  'revocation-db': { type: 'string' },
  'budget-db': { type: 'string' },
  'control-url': { type: 'string' },
  'control-token': { type: 'string' },
  'control-token-file': { type: 'string' },
} as const satisfies ParseArgsConfig['options']

export interface GlobalFlags {
  authoritySeedFile?: string
  receiptDb?: string
  revocationDb?: string
  budgetDb?: string
  controlUrl?: string
  /** From GATE_CONTROL_TOKEN (preferred: argv is visible to other users), else --control-token. */
  controlToken?: string
  /** Which of the two gave `controlToken`. */
  controlTokenFrom?: 'GATE_CONTROL_TOKEN' | '--control-token'
  /** --control-token-file: where the token is kept (config/control-token.ts). */
  controlTokenFile?: string
}

export const GLOBAL_FLAGS_HELP = `Global options:
  --authority-seed-file PATH  signing key file (Ed25519, P-256, P-384 or hybrid; gate keygen [--algorithm
                              NAME] PATH) that keeps the key stable across restarts; receipts, checkpoints
                              and capabilities are signed with its algorithm. Without it a fresh Ed25519
                              key is generated per boot
  --receipt-db PATH           SQLite receipt store (used when --receipt-store is absent)
  --revocation-db PATH        SQLite revocation store (default: beside the receipt store)
  --budget-db PATH            SQLite invocation-budget store (default: beside the receipt store)
  --control-url URL           client commands: the sidecar or trust-control to call; gate sidecar,
                              gate api protect, gate mcp serve: the trust-control to join (docs/fleet.md)
  --control-token TOKEN       bearer token of the control routes (at least 16 characters); prefer the
                              GATE_CONTROL_TOKEN environment variable (argv is visible to other local users)
  --control-token-file PATH   file holding the control token. gate sidecar and gate api protect use
                              GATE_CONTROL_TOKEN, else --control-token, else this file (default:
                              control-token beside the receipt store), created 0600 with a random
                              token when missing; client commands read it (default .gate/control-token)`

export function readGlobalFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): GlobalFlags {
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined)
  const envToken = env.GATE_CONTROL_TOKEN === undefined || env.GATE_CONTROL_TOKEN === '' ? undefined : env.GATE_CONTROL_TOKEN
  const flagToken = str('control-token')
  return {
    authoritySeedFile: str('authority-seed-file'),
    receiptDb: str('receipt-db'),
    revocationDb: str('revocation-db'),
    budgetDb: str('budget-db'),
    controlUrl: str('control-url'),
    controlToken: envToken ?? flagToken,
    controlTokenFrom: envToken !== undefined ? 'GATE_CONTROL_TOKEN' : flagToken !== undefined ? '--control-token' : undefined,
    controlTokenFile: str('control-token-file'),
  }
}
