/**
 * The one-shot filesystem RPCs: `Stat`, `MakeDir`, `Move`, `ListDir`,
 * `Remove`, with the error codes the SDKs expect (§3.4 of the protocol
 * reference): `not_found` for missing paths, `already_exists` from `MakeDir`,
 * `invalid_argument` for a file where a directory is expected.
 *
 * @module
 */
import type { BigIntStats } from 'node:fs';
import { cp, lstat, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AenvError } from '@aenv/shared';
import { errnoOf, fsError } from '../errors.js';
import { ensureDirs, ownerFor } from '../paths/ensure-dirs.js';
import type { UserInfo } from '../users/user-db.js';
import type { UserDb } from '../users/user-db.js';
import { entryFromStats, entryInfo, type EntryInfoMessage } from './entry-info.js';

/**
 * Creates a directory and its parents, owned by the user.
 * @throws {AenvError} `ENVD_ALREADY_EXISTS`, `ENVD_NOT_A_DIRECTORY`.
 */
export async function makeDir(
  path: string,
  user: UserInfo,
  users: UserDb,
): Promise<EntryInfoMessage> {
  const existing = await stat(path).catch((err: unknown) => {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw fsError(err, 'stat', path);
  });
  if (existing?.isDirectory() === true) {
    throw new AenvError('ENVD_ALREADY_EXISTS', `directory already exists: ${path}`, {
      fields: { path },
    });
  }
  if (existing !== undefined) {
    throw new AenvError(
      'ENVD_NOT_A_DIRECTORY',
      `path already exists but it is not a directory: ${path}`,
      {
        fields: { path },
      },
    );
  }
  await ensureDirs(path, ownerFor(user));
  return entryInfo(path, users);
}

/** Renames `source` to `destination`, creating the destination's parents. */
export async function move(
  source: string,
  destination: string,
  user: UserInfo,
  users: UserDb,
): Promise<EntryInfoMessage> {
  await lstat(source).catch((err: unknown) => {
    throw fsError(err, 'stat', source);
  });
  await ensureDirs(dirname(destination), ownerFor(user));
  try {
    await rename(source, destination);
  } catch (err) {
    if (errnoOf(err) !== 'EXDEV') throw fsError(err, 'rename', source);
    // Across filesystems: copy, then remove the source.
    await cp(source, destination, {
      recursive: true,
      preserveTimestamps: true,
      verbatimSymlinks: true,
    });
    await rm(source, { recursive: true, force: true });
  }
  return entryInfo(destination, users);
}

/** Removes a file or a directory tree; a missing path is not an error. */
export async function remove(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch (err) {
    throw fsError(err, 'remove', path);
  }
}

async function walk(
  real: string,
  shown: string,
  depth: number,
  users: UserDb,
  out: EntryInfoMessage[],
): Promise<void> {
  const names = (await readdir(real).catch(() => [])).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    let st: BigIntStats;
    try {
      st = await lstat(join(real, name), { bigint: true });
    } catch {
      continue; // removed while listing
    }
    out.push(await entryFromStats(join(shown, name), st, users));
    if (depth > 1 && st.isDirectory())
      await walk(join(real, name), join(shown, name), depth - 1, users, out);
  }
}

/**
 * The entries under a directory, `depth` levels deep (0 counts as 1), in
 * lexical depth-first order; paths are under `path` as requested.
 * @throws {AenvError} `ENVD_PATH_NOT_FOUND`, `ENVD_NOT_A_DIRECTORY`.
 */
export async function listDir(
  path: string,
  depth: number,
  users: UserDb,
): Promise<EntryInfoMessage[]> {
  const st = await stat(path).catch((err: unknown) => {
    throw fsError(err, 'stat', path);
  });
  if (!st.isDirectory()) {
    throw new AenvError('ENVD_NOT_A_DIRECTORY', `path is not a directory: ${path}`, {
      fields: { path },
    });
  }
  const out: EntryInfoMessage[] = [];
  await walk(path, path, Math.max(depth, 1), users, out);
  return out;
}
