/**
 * Streams an upload into a file the way E2B's envd does: parents created and
 * owned by the user, an existing file truncated, the file owned by the user,
 * the data written as it arrives (never buffered whole), a full disk
 * reported as `ENVD_NO_SPACE` (507).
 *
 * @module
 */
import { open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { AenvError } from '@aenv/shared';
import { errnoOf, fsError, toError } from '../errors.js';
import { ensureDirs, type Owner } from '../paths/ensure-dirs.js';

/**
 * Writes `source` to `path`.
 * @throws {AenvError} `ENVD_IS_A_DIRECTORY`, `ENVD_NOT_A_DIRECTORY`, `ENVD_NO_SPACE`.
 */
export async function writeFileFrom(source: Readable, path: string, owner: Owner): Promise<void> {
  await ensureDirs(dirname(path), owner);
  const existing = await stat(path).catch((err: unknown) => {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw fsError(err, 'stat', path);
  });
  if (existing?.isDirectory() === true) {
    throw new AenvError('ENVD_IS_A_DIRECTORY', `path is a directory: ${path}`, {
      fields: { path },
    });
  }
  const handle = await open(path, 'w', 0o666).catch((err: unknown) => {
    throw fsError(err, 'open', path);
  });
  let streaming = false;
  try {
    if (owner !== undefined) await handle.chown(owner.uid, owner.gid);
    // The stream owns the handle from here on and closes it when done.
    streaming = true;
    await pipeInto(source, handle.createWriteStream());
  } catch (err) {
    throw errnoOf(err) === 'ENOSPC' || errnoOf(err) === 'EDQUOT'
      ? fsError(err, 'write', path)
      : toUploadError(err, path);
  } finally {
    if (!streaming) await handle.close().catch(() => {});
  }
}

/**
 * Pipes `source` into `out` until the source ends. Unlike `pipeline`, a
 * failure does not destroy the source: the request stays readable, so the
 * caller can drain it and still answer with an error.
 */
function pipeInto(source: Readable, out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (err: unknown): void => {
      source.unpipe(out);
      out.destroy();
      reject(toError(err));
    };
    source.once('error', fail);
    out.once('error', fail);
    // 'close' comes after 'finish' once the file is closed.
    out.once('close', () => {
      source.off('error', fail);
      if (out.writableFinished) resolve();
    });
    source.pipe(out);
  });
}

function toUploadError(err: unknown, path: string): AenvError {
  if (err instanceof AenvError) return err;
  const errno = errnoOf(err);
  if (errno?.startsWith('Z_') === true || errno === 'ERR_STREAM_PREMATURE_CLOSE') {
    return new AenvError(
      'ENVD_UPLOAD_INVALID',
      `upload of '${path}' was cut or malformed: ${(err as Error).message}`,
      {
        cause: err,
        fields: { path },
      },
    );
  }
  return fsError(err, 'write', path);
}
