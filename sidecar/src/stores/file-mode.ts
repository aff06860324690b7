// Store files are private: mode 0600 for the database and its -wal, -shm and -journal files. They hold
// issued bearer tokens (capabilities), signing seeds (authority), and every receipt. The file is created
// 0600 before SQLite opens it (SQLite would create it 0644 minus the umask, and gives the files beside it
// the database file's own mode), and a file that proved to be one of Gate's stores is narrowed to 0600
// when others can read it (a file made by an older version). A foreign file keeps its mode: it is
// refused before it is touched.
import { chmodSync, closeSync, constants, existsSync, openSync, statSync } from 'node:fs'
import { StoreFailedError } from '../errors.js'

/** The mode of every store file. */
const STORE_FILE_MODE = 0o600

/** The file-system path of a store path (`file:` URIs included). */
export function fileSystemPath(path: string): string {
  if (!path.startsWith('file:')) return path
  const url = new URL(path)
  return decodeURIComponent(url.pathname)
}

/** Creates `path` empty with mode 0600 unless it exists; an existing file is left alone here. */
export function createPrivateFile(path: string, store: string): void {
  try {
    closeSync(openSync(fileSystemPath(path), constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, STORE_FILE_MODE))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return
    throw new StoreFailedError(store, path, `cannot create the file with mode 0600 (${(err as Error).message})`, err)
  }
}

/** Narrows the store file and the files SQLite keeps beside it to 0600 when others can read them. */
export function restrictFileMode(path: string, store: string): void {
  const file = fileSystemPath(path)
  try {
    for (const each of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
      if (existsSync(each) && (statSync(each).mode & 0o077) !== 0) chmodSync(each, STORE_FILE_MODE)
    }
  } catch (err) {
    throw new StoreFailedError(store, path, `cannot restrict the file to mode 0600 (${(err as Error).message})`, err)
  }
}
