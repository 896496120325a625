/**
 * Maps a write to the node database that failed for lack of disk space
 * (SQLite's `SQLITE_FULL`, or an I/O error whose cause is ENOSPC) to
 * `STORAGE_NO_SPACE`, so the API answers 507 instead of 500. SQLite rolls
 * the statement or transaction back, so nothing acknowledged before is lost
 * and the failed write is simply not acknowledged.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Whether `err` is SQLite reporting a full disk. */
export function isSqliteFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_FULL') return true;
  const message = err instanceof Error ? err.message : '';
  return (
    typeof code === 'string' && code.startsWith('SQLITE_IOERR') && /ENOSPC|full/i.test(message)
  );
}

/** Runs a database write, turning a full disk into `STORAGE_NO_SPACE`. */
export function writeOrNoSpace<R>(what: string, fn: () => R): R {
  try {
    return fn();
  } catch (err) {
    if (!isSqliteFull(err)) throw err;
    throw new AenvError(
      'STORAGE_NO_SPACE',
      `the node database is full (${what}): free disk space`,
      {
        cause: err,
      },
    );
  }
}
