// Listening on a Unix domain socket (`--listen unix:PATH`). The socket file is a local trust boundary:
// whoever can connect can ask for decisions, and without a control token reach the control routes. So
// it is created owner-only (0600: the umask is narrowed around the synchronous bind, so there is no
// moment with wider permissions), a stale socket left by a crashed sidecar is removed at start, and
// nothing else at that path is ever removed or followed: a symlink, a regular file, or a socket another
// process is serving refuses the start.
import { lstatSync, unlinkSync } from 'node:fs'
import { connect, type Server } from 'node:net'
import { ConfigError } from '../errors.js'

/** The socket's permissions: read and write for its owner only. */
export const SOCKET_MODE = 0o600

/** Removes a stale socket at `path` (nothing serves it); refuses anything else that is there. */
export async function removeStaleSocket(path: string): Promise<void> {
  let stat
  try {
    stat = lstatSync(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw new ConfigError(`cannot listen on unix:${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  if (stat.isSymbolicLink()) throw new ConfigError(`cannot listen on unix:${path}: it is a symbolic link, which Gate never follows; remove it or choose another path`)
  if (!stat.isSocket()) throw new ConfigError(`cannot listen on unix:${path}: a file that is not a socket is there; remove it or choose another path`)
  const probe = await probeSocket(path)
  if (probe === 'served') throw new ConfigError(`cannot listen on unix:${path}: another process is serving that socket`)
  if (probe !== 'stale') throw new ConfigError(`cannot listen on unix:${path}: the socket there cannot be checked (${probe}); remove it or choose another path`)
  try {
    unlinkSync(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigError(`cannot remove the stale socket unix:${path}: ${(err as NodeJS.ErrnoException).code}`, err)
  }
}

/** Binds `server` to `path` with mode 0600 and resolves once it listens; the path must be free. */
export function listenOnSocket(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err)
    server.once('error', onError)
    // bind(2) creates the file with 0777 & ~umask; node binds synchronously inside listen(), so the
    // narrowed umask covers exactly that call (process-wide, but only for these few instructions)
    const umask = process.umask(0o777 & ~SOCKET_MODE)
    try {
      server.listen(path, () => {
        server.off('error', onError)
        try {
          checkSocketFile(path)
          resolve()
        } catch (err) {
          server.close()
          reject(err)
        }
      })
    } finally {
      process.umask(umask)
    }
  })
}

/** The bound file must be the socket just created, owner-only (not replaced, not widened). */
function checkSocketFile(path: string): void {
  const stat = lstatSync(path)
  if (!stat.isSocket() || (stat.mode & 0o777) !== SOCKET_MODE) {
    throw new ConfigError(`unix:${path} is not an owner-only socket after binding (mode ${(stat.mode & 0o777).toString(8)}); refusing to serve on it`)
  }
}

/** `served` when a process accepts connections there, `stale` when none listens, else the error code. */
function probeSocket(path: string): Promise<string> {
  return new Promise(resolve => {
    const socket = connect({ path })
    socket.once('connect', () => {
      socket.destroy()
      resolve('served')
    })
    // ECONNREFUSED: a socket file nobody listens on (its process died without removing it); anything
    // else (EACCES: another user's socket) is not ours to remove
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'stale' : (err.code ?? err.message)))
  })
}
