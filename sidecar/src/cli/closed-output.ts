// A reader that goes away early (`gate receipt list | head -1`) closes the pipe under stdout: the next
// write fails with EPIPE, which Node reports as an 'error' event on the stream and, with no listener,
// throws as an uncaught exception, a stack trace on stderr. Nobody is left to read the rest, so the
// rest is dropped: the command runs to its end and its exit code stands (a shell with pipefail still
// sees an audit's finding). Only for commands whose stdout is output, never a protocol.

/** Drops what is written to `streams` once their reader is gone, instead of crashing with EPIPE. */
export function dropOutputAfterClosedPipe(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    if (stream.listeners('error').includes(onWriteError)) continue
    stream.on('error', onWriteError)
  }
}

function onWriteError(err: NodeJS.ErrnoException): void {
  // EPIPE, then ERR_STREAM_DESTROYED for every write after it
  if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return
  throw err
}
