// The control token of `gate sidecar` and `gate api protect` (docs/security.md, "Control routes"). The
// control routes (/v1/*, /approvals*) always need it: there is no unauthenticated mode, since behind
// an ingress or a local reverse proxy every caller is loopback. The token comes from GATE_CONTROL_TOKEN,
// else --control-token; without either, from a token file: reused when it is a private (0600) file
// holding a well-formed token, created with a fresh random token otherwise (never overwritten). The
// file defaults to `control-token` beside the receipt store (`.gate/control-token` for `--receipt-store
// .gate/receipts.db`), or `.gate/control-token` in the working directory without a store. The `gate`
// client commands look for the token in the same places (control-client.ts).
import { randomBytes } from 'node:crypto'
import { closeSync, constants, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { checkControlToken, isWellFormedControlToken } from '@gate/sdk/server'
import { ConfigError } from '../errors.js'
import { fileSystemPath } from '../stores/file-mode.js'
import type { GlobalFlags } from './global-flags.js'

/** The token file's name beside the receipt store. */
const CONTROL_TOKEN_FILE_NAME = 'control-token'

/** Where the client commands look when given no token: `.gate/control-token` in the working directory. */
export const DEFAULT_CONTROL_TOKEN_FILE = join('.gate', CONTROL_TOKEN_FILE_NAME)

/** The service's token and where it came from (a description safe to print: never the token). */
export interface ServiceControlToken {
  token: string
  /** `GATE_CONTROL_TOKEN`, `--control-token`, or the token file's absolute path. */
  source: string
  /** The token file, when the token lives in one. */
  file?: string
  /** True when this start created the file. */
  created: boolean
}

/** The token's global flags (their GlobalFlags names) and the durable receipt store path, when there is one. */
export interface ControlTokenInputs extends Pick<GlobalFlags, 'controlToken' | 'controlTokenFrom' | 'controlTokenFile'> {
  receiptStore?: string
}

/** The default token file of a service: beside the receipt store, else `.gate/control-token` here. */
export function defaultServiceTokenFile(receiptStore: string | undefined): string {
  if (receiptStore === undefined) return resolve(DEFAULT_CONTROL_TOKEN_FILE)
  return join(dirname(resolve(fileSystemPath(receiptStore))), CONTROL_TOKEN_FILE_NAME)
}

/** Resolves (and, when needed, creates) the control token of a service. Throws ConfigError with the fix. */
export function provideServiceControlToken(inputs: ControlTokenInputs): ServiceControlToken {
  if (inputs.controlToken !== undefined) {
    const from = inputs.controlTokenFrom ?? 'GATE_CONTROL_TOKEN'
    return { token: checkControlToken(inputs.controlToken, from), source: from, created: false }
  }
  const file = resolve(inputs.controlTokenFile ?? defaultServiceTokenFile(inputs.receiptStore))
  const existing = readPrivateTokenFile(file)
  if (existing !== undefined) return { token: existing, source: file, file, created: false }
  const token = randomBytes(32).toString('base64url')
  if (!writeNewTokenFile(file, token)) {
    // another process created it between the read and the write: use theirs
    const theirs = readPrivateTokenFile(file)
    if (theirs === undefined) throw new ConfigError(`control token file ${file} vanished while it was being created`)
    return { token: theirs, source: file, file, created: false }
  }
  return { token, source: file, file, created: true }
}

/**
 * The token in `file`, or undefined when there is no such file. A file others can read, one that is
 * not a regular file, or one that does not hold exactly one well-formed token is refused: its token
 * may be known to someone else, so it is neither reused nor silently replaced.
 */
function readPrivateTokenFile(file: string): string | undefined {
  let stat
  try {
    stat = statSync(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new ConfigError(`cannot read control token file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  if (!stat.isFile()) throw new ConfigError(`control token file ${file} is not a regular file`)
  if ((stat.mode & 0o077) !== 0) {
    throw new ConfigError(`control token file ${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); its token may be known: delete the file and a new one is created at start`)
  }
  const token = readTokenText(file)
  if (!isWellFormedControlToken(token)) {
    throw new ConfigError(`control token file ${file} does not hold a control token (at least 16 visible ASCII characters on one line); delete it and a new one is created at start`)
  }
  return token
}

/** The trimmed content of a token file (the client reads files it did not create this way too). */
export function readTokenText(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim()
  } catch (err) {
    throw new ConfigError(`cannot read control token file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
}

// Created exclusively with mode 0600 before the token is written: no moment where the file exists
// with another mode or another content. False when the file already exists.
function writeNewTokenFile(file: string, token: string): boolean {
  let fd: number
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw new ConfigError(`cannot create control token file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  try {
    writeSync(fd, `${token}\n`)
  } finally {
    closeSync(fd)
  }
  return true
}
