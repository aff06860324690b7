// Whether a --listen address can be bound. `gate sidecar`, `gate api protect` and `gate trust serve`
// ask before they open their stores, so a start that cannot bind (another process on the port) fails
// at once, names the way out, and leaves no new store files behind.
import { createServer } from 'node:net'
import { ConfigError } from '../errors.js'
import { formatBaseUrl, type ListenAddress } from './listen-address.js'

const WAY_OUT: Record<string, string> = {
  EADDRINUSE: 'the address is in use by another process: stop it, or choose another port with --listen HOST:PORT',
  EACCES: 'permission denied (ports below 1024 need privileges): choose another port with --listen HOST:PORT',
  EADDRNOTAVAIL: 'no network interface of this machine has that address: choose another with --listen HOST:PORT',
}

/** The startup error of a failed bind: the address, the system's code and what to do about it. */
export function listenFailure(address: ListenAddress, err: unknown): ConfigError {
  const code = (err as NodeJS.ErrnoException).code
  const why = code === undefined ? (err as Error).message : `${code}, ${WAY_OUT[code] ?? 'check --listen HOST:PORT'}`
  return new ConfigError(`cannot listen on ${formatBaseUrl(address.host, address.port).slice('http://'.length)} (${why})`, err)
}

/**
 * Binds `address` and releases it at once; throws `listenFailure` when it cannot be bound. Port 0 is not
 * checked (the server picks a free port). Another process may still take the port before the real bind;
 * that start then fails with the same message, after its stores were opened.
 */
export async function checkCanListen(address: ListenAddress): Promise<void> {
  if (address.port === 0) return
  const probe = createServer()
  await new Promise<void>((resolve, reject) => {
    probe.once('error', err => reject(listenFailure(address, err)))
    probe.listen({ host: address.host, port: address.port, exclusive: true }, () => probe.close(() => resolve()))
  })
}
