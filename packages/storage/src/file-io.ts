/**
 * Positional file I/O on raw file descriptors, and the mapping of
 * filesystem errors to aenv error codes.
 *
 * Two modes for `readFull`/`writeFull`, chosen per thread with
 * {@link useSyncIo}:
 * - thread pool (the default): callback `fs.read`/`fs.write` (cheaper per
 *   call than `FileHandle`); never blocks the calling thread;
 * - synchronous: `readSync`/`writeSync` on the calling thread. On files in
 *   the page cache this doubles small-request throughput (no hand-off to a
 *   pool thread and back), but a slow disk blocks the thread. The NBD worker
 *   thread uses it: blocking there delays block I/O, never the daemon's API.
 * `fdatasync` always goes through the thread pool.
 *
 * `readFull`/`writeFull` loop over short transfers, so callers can treat
 * them as all-or-nothing. Reading past the end of a file is an error here:
 * every caller knows how long the data it asks for is.
 *
 * @module
 */
import {
  close,
  fdatasync,
  fstat,
  fsync,
  open,
  read,
  readSync,
  write,
  writeSync,
  type Stats,
} from 'node:fs';
import { AenvError, toAenvError, type ErrorCode } from '@aenv/shared';

let syncIo = false;

/** Chooses synchronous (`true`) or thread-pool positional I/O for this thread. */
export function useSyncIo(enabled: boolean): void {
  syncIo = enabled;
}

function readOnce(fd: number, buf: Uint8Array, off: number, len: number, pos: number) {
  if (syncIo) return Promise.resolve(readSync(fd, buf, off, len, pos));
  return new Promise<number>((resolve, reject) => {
    read(fd, buf, off, len, pos, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

function writeOnce(fd: number, buf: Uint8Array, off: number, len: number, pos: number) {
  if (syncIo) return Promise.resolve(writeSync(fd, buf, off, len, pos));
  return new Promise<number>((resolve, reject) => {
    write(fd, buf, off, len, pos, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

/**
 * Fills `target` from `fd` at `position`.
 * @throws {AenvError} `STORAGE_OUT_OF_RANGE` at end of file; I/O errors mapped by {@link fsError}.
 */
export async function readFull(fd: number, target: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < target.length) {
    let n: number;
    try {
      n = await readOnce(fd, target, done, target.length - done, position + done);
    } catch (err) {
      throw fsError(err, 'read failed');
    }
    if (n === 0) {
      throw new AenvError('STORAGE_OUT_OF_RANGE', 'read past the end of a file', {
        fields: { position: position + done, length: target.length - done },
      });
    }
    done += n;
  }
}

/** Writes all of `data` to `fd` at `position`. */
export async function writeFull(fd: number, data: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    try {
      done += await writeOnce(fd, data, done, data.length - done, position + done);
    } catch (err) {
      throw fsError(err, 'write failed');
    }
  }
}

/** `fdatasync(2)` as a promise. */
export function syncData(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fdatasync(fd, (err) => (err ? reject(fsError(err, 'fdatasync failed')) : resolve()));
  });
}

/** `fstat(2)` as a promise. */
export function statFd(fd: number): Promise<Stats> {
  return new Promise((resolve, reject) => {
    fstat(fd, (err, st) => (err ? reject(fsError(err, 'fstat failed')) : resolve(st)));
  });
}

/** The errno name of a Node system error, if it is one. */
export function errnoOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const code = err.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Wraps a filesystem error: a full disk becomes `STORAGE_NO_SPACE`, anything
 * else `fallback` (default `INTERNAL`); AenvErrors pass through.
 */
export function fsError(
  err: unknown,
  context: string,
  fallback: ErrorCode = 'INTERNAL',
): AenvError {
  const errno = errnoOf(err);
  if (errno === 'ENOSPC' || errno === 'EDQUOT')
    return toAenvError(err, 'STORAGE_NO_SPACE', context);
  return toAenvError(err, fallback, context);
}

/** `open(2)` as a promise, returning a raw descriptor. */
export function openFd(path: string, flags: string): Promise<number> {
  return new Promise((resolve, reject) => {
    open(path, flags, 0o644, (err, fd) =>
      err ? reject(fsError(err, `open ${path}`)) : resolve(fd),
    );
  });
}

/** `close(2)` as a promise. */
export function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    close(fd, (err) => (err ? reject(fsError(err, 'close failed')) : resolve()));
  });
}

/** Syncs a directory, so a rename or create inside it is durable. */
export async function syncDir(dir: string): Promise<void> {
  const fd = await openFd(dir, 'r');
  try {
    await new Promise<void>((resolve, reject) => {
      fsync(fd, (err) => (err ? reject(fsError(err, `fsync ${dir}`)) : resolve()));
    });
  } finally {
    await closeFd(fd);
  }
}
