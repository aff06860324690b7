// `gate trust serve`'s transport flags (spec 03, Authentication 5: remote trust-control HTTP requires
// TLS; plaintext remote deployment is nonconformant). --tls-cert and --tls-key (PEM files) serve HTTPS;
// without them the service listens only on loopback unless --allow-plaintext-remote says the operator
// terminates TLS in front of it (a proxy or a mesh on the same host).
import { readFile } from 'node:fs/promises'
import { isIP } from 'node:net'
import { ConfigError, UsageError } from '../errors.js'
import type { ListenAddress } from './listen-address.js'

export const TLS_FLAG_OPTIONS = {
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'allow-plaintext-remote': { type: 'boolean' },
} as const

export const TLS_FLAGS_HELP = `Transport:
  --tls-cert PATH             serve HTTPS with this PEM certificate (chain); needs --tls-key
  --tls-key PATH              the PEM private key of --tls-cert
  --allow-plaintext-remote    listen on a non-loopback address without TLS (only behind a TLS-terminating
                              proxy on this host; spec 03 calls plaintext remote trust-control nonconformant)`

/** What the flags asked for. */
export interface TlsSettings {
  certPath: string | undefined
  keyPath: string | undefined
  allowPlaintextRemote: boolean
}

/** Reads the flags and refuses plaintext on a non-loopback address unless forced (usage error, exit 2). */
export function readTlsFlags(values: Record<string, unknown>, listen: ListenAddress): TlsSettings {
  const certPath = values['tls-cert'] as string | undefined
  const keyPath = values['tls-key'] as string | undefined
  const allowPlaintextRemote = values['allow-plaintext-remote'] === true
  if ((certPath === undefined) !== (keyPath === undefined)) throw new UsageError('--tls-cert and --tls-key go together: give both, or neither')
  if (certPath === undefined && !allowPlaintextRemote && !isLoopback(listen.host)) {
    throw new UsageError(
      `refusing to serve trust-control in plaintext on ${listen.host} (not a loopback address): give --tls-cert and --tls-key, ` +
        'or --allow-plaintext-remote when a TLS-terminating proxy on this host fronts it',
    )
  }
  return { certPath, keyPath, allowPlaintextRemote }
}

/** The certificate and key, read once at start (exit 1 when unreadable). */
export async function loadTls(settings: TlsSettings): Promise<{ cert: Buffer; key: Buffer } | undefined> {
  if (settings.certPath === undefined || settings.keyPath === undefined) return undefined
  const read = async (path: string, flag: string) => {
    try {
      return await readFile(path)
    } catch (err) {
      throw new ConfigError(`cannot read ${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
    }
  }
  return { cert: await read(settings.certPath, '--tls-cert'), key: await read(settings.keyPath, '--tls-key') }
}

/** 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1' || host === '0:0:0:0:0:0:0:1'
}
