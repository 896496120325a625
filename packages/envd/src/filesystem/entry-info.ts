/**
 * `EntryInfo` of a filesystem entry, as E2B's envd (Go) reports it: the
 * entry itself, not a symlink's target (`lstat`), `mode` as the permission
 * bits, `permissions` in Go's `FileMode.String()` form (`-rw-r--r--`,
 * `drwxr-xr-x`, `Lrwxrwxrwx`), owner and group names (numeric ids when
 * unknown), nanosecond mtime, and a symlink's target as an absolute path.
 *
 * @module
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { FileType, type EntryInfoSchema } from '../gen/filesystem/filesystem_pb.js';
import { fsError } from '../errors.js';
import type { UserDb } from '../users/user-db.js';

/** An `EntryInfo` message. */
export type EntryInfoMessage = MessageInitShape<typeof EntryInfoSchema>;

const S_IFMT = 0o170000n;
const TYPE_BITS: ReadonlyArray<readonly [bigint, string]> = [
  [0o040000n, 'd'],
  [0o120000n, 'L'],
  [0o060000n, 'D'],
  [0o010000n, 'p'],
  [0o140000n, 'S'],
  [0o020000n, 'Dc'],
];

/** The permissions string Go's `FileMode.String()` gives for a stat mode. */
export function goModeString(mode: bigint): string {
  const type = TYPE_BITS.find(([bits]) => (mode & S_IFMT) === bits)?.[1] ?? '';
  // Go's order: d a l T L D p S u g c t ?; only d, L, D, p, S, u, g, c, t occur here.
  let head = type.replace('c', '');
  if (mode & 0o4000n) head += 'u';
  if (mode & 0o2000n) head += 'g';
  if (type.includes('c')) head += 'c';
  if (mode & 0o1000n) head += 't';
  let rwx = '';
  for (let i = 8; i >= 0; i--) rwx += mode & (1n << BigInt(i)) ? 'rwx'[(8 - i) % 3] : '-';
  return (head === '' ? '-' : head) + rwx;
}

function fileType(st: BigIntStats): FileType {
  if (st.isFile()) return FileType.FILE;
  if (st.isDirectory()) return FileType.DIRECTORY;
  if (st.isSymbolicLink()) return FileType.SYMLINK;
  return FileType.UNSPECIFIED;
}

async function symlinkTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return resolve(dirname(path), await readlink(path));
  }
}

/** The `EntryInfo` of an entry whose `lstat` result is known. */
export async function entryFromStats(
  path: string,
  st: BigIntStats,
  users: UserDb,
): Promise<EntryInfoMessage> {
  const uid = Number(st.uid);
  const gid = Number(st.gid);
  return {
    name: basename(path),
    type: fileType(st),
    path,
    size: st.size,
    mode: Number(st.mode & 0o777n),
    permissions: goModeString(st.mode),
    owner: users.userName(uid) ?? String(uid),
    group: users.groupName(gid) ?? String(gid),
    modifiedTime: {
      seconds: st.mtimeNs / 1_000_000_000n,
      nanos: Number(st.mtimeNs % 1_000_000_000n),
    },
    ...(st.isSymbolicLink() ? { symlinkTarget: await symlinkTarget(path) } : {}),
  };
}

/**
 * The `EntryInfo` of `path` (not following a final symlink).
 * @throws {AenvError} `ENVD_PATH_NOT_FOUND` and the other filesystem codes.
 */
export async function entryInfo(path: string, users: UserDb): Promise<EntryInfoMessage> {
  let st: BigIntStats;
  try {
    st = await lstat(path, { bigint: true });
  } catch (err) {
    throw fsError(err, 'stat', path);
  }
  return entryFromStats(path, st, users);
}
