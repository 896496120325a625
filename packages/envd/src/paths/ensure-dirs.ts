/**
 * `mkdir -p` that hands every directory it creates to the requesting user,
 * as E2B's envd does for uploads, `MakeDir` and `Move` destinations.
 *
 * @module
 */
import { chown, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AenvError } from '@aenv/shared';
import { errnoOf, fsError } from '../errors.js';

/** Who new files and directories belong to; undefined leaves ownership alone. */
export type Owner = { readonly uid: number; readonly gid: number } | undefined;

/** The owner to give new files of a user: only root can give files away. */
export function ownerFor(user: { uid: number; gid: number }): Owner {
  return process.getuid?.() === 0 ? { uid: user.uid, gid: user.gid } : undefined;
}

async function isDirectory(path: string): Promise<boolean | undefined> {
  try {
    return (await stat(path)).isDirectory();
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw fsError(err, 'stat', path);
  }
}

/**
 * Makes `dir` and its missing parents, owned by `owner`.
 * @throws {AenvError} `ENVD_NOT_A_DIRECTORY` when a file is in the way.
 */
export async function ensureDirs(dir: string, owner: Owner): Promise<void> {
  const kind = await isDirectory(dir);
  if (kind === true) return;
  if (kind === false) {
    throw new AenvError('ENVD_NOT_A_DIRECTORY', `path '${dir}' is a file, not a directory`, {
      fields: { path: dir },
    });
  }
  if (dirname(dir) !== dir) await ensureDirs(dirname(dir), owner);
  try {
    await mkdir(dir, { mode: 0o755 });
  } catch (err) {
    if (errnoOf(err) === 'EEXIST' && (await isDirectory(dir)) === true) return;
    throw fsError(err, 'mkdir', dir);
  }
  if (owner !== undefined) await chown(dir, owner.uid, owner.gid);
}
