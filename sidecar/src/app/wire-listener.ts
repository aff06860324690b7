// Where the native wire listens (docs/wire.md, "Transports"): a Unix socket, created owner-only
// (0600) like the sidecar's (http/unix-socket.ts), or TCP with mutual TLS for an agent on another host
// (spec 03, Authentication 5: cross-host TCP requires mTLS): the client must present a certificate
// that chains to --tls-client-ca, or the handshake fails before a frame is read. Every accepted
// transport goes to the wire endpoint with who it is: anonymous on a Unix socket (the file's
// permissions are the admission), the certificate's subject and SHA-256 fingerprint on mTLS.
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer as createNetServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer as createTlsServer, type TLSSocket } from 'node:tls'
import { ANONYMOUS_CALLER, socketPathProblem, UNIX_PREFIX, type CallerIdentity } from '@gate/sdk'
import type { WireEndpoint } from '@gate/wire'
import { formatBaseUrl } from '../config/listen-address.js'
import { listenFailure } from '../config/listen-check.js'
import { ConfigError } from '../errors.js'
import { listenOnSocket, removeStaleSocket } from '../http/unix-socket.js'

export type WireListenSettings =
  | { kind: 'unix'; path: string }
  | { kind: 'tls'; host: string; port: number; cert: Buffer; key: Buffer; clientCa: Buffer }

export interface WireListener {
  /** `unix:PATH`, or `tls://HOST:PORT`. */
  url: string
  /** Stops accepting, waits for the open transports to end (close the endpoint first), removes a socket file. */
  close(): Promise<void>
}

/** Listens and hands every connection to `endpoint`. */
export async function listenWire(settings: WireListenSettings, endpoint: WireEndpoint): Promise<WireListener> {
  if (settings.kind === 'unix') {
    await removeStaleSocket(settings.path)
    const server = createNetServer(socket => endpoint.accept(socket, ANONYMOUS_CALLER))
    try {
      await listenOnSocket(server, settings.path)
    } catch (err) {
      if (err instanceof ConfigError) throw err
      throw new ConfigError(`cannot listen on unix:${settings.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
    }
    return {
      url: `${UNIX_PREFIX}${settings.path}`,
      async close() {
        await closeServer(server)
        await rm(settings.path, { force: true })
      },
    }
  }
  const server = createTlsServer(
    { cert: settings.cert, key: settings.key, ca: settings.clientCa, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
    socket => endpoint.accept(socket, certificateCaller(socket)),
  )
  const address = await new Promise<{ address: string; port: number }>((resolve, reject) => {
    server.once('error', err => reject(listenFailure(settings, err)))
    server.listen({ host: settings.host, port: settings.port }, () => resolve(server.address() as { address: string; port: number }))
  })
  return { url: formatBaseUrl(address.address, address.port).replace(/^http:/, 'tls:'), close: () => closeServer(server) }
}

/** The mTLS client as a caller (spec 02 CallerIdentity, auth method mtls_certificate). */
function certificateCaller(socket: TLSSocket): CallerIdentity {
  const cert = socket.getPeerCertificate()
  const dn = Object.entries(cert.subject ?? {}).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : v}`).join(',') || 'unknown'
  const fingerprint = (cert.fingerprint256 ?? '').replace(/:/g, '').toLowerCase()
  return { subject: `mtls:${dn}`, auth_method: { method: 'mtls_certificate', subject_dn: dn, fingerprint }, verified: true }
}

/** A fresh socket path for `gate run`: in a new directory only its owner can enter (mkdtemp makes it 0700). */
export async function createRunSocketPath(): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'gate-run-'))
  const path = join(dir, 'wire.sock')
  const problem = socketPathProblem(path)
  if (problem !== undefined) {
    await rm(dir, { recursive: true, force: true })
    throw new ConfigError(`the wire socket ${path} must be ${problem}: set TMPDIR to a shorter directory`)
  }
  return { path, remove: () => rm(dir, { recursive: true, force: true }) }
}

function closeServer(server: Server): Promise<void> {
  return new Promise(resolve => server.close(() => resolve()))
}
