/**
 * Applying one OCI layer (a tar stream) onto an image's root directory, as
 * the OCI image spec's "Applying Changesets" says:
 *
 * - `.wh.<name>` deletes `<name>` of the layers below; `.wh..wh..opq` in a
 *   directory deletes everything the layers below put there. Whiteouts never
 *   hide entries of their own layer.
 * - An entry replaces what is at its path, except a directory onto a
 *   directory, which only takes the new metadata.
 * - Owners, modes (setuid/setgid/sticky included), modification times,
 *   hard links, symlinks, device nodes, fifos and extended attributes
 *   (`setfattr`, when installed) are kept. Parent directories an archive
 *   omits are created 0755 root:root.
 *
 * Every path is resolved inside the root (`root-path.ts`); the daemon runs
 * as root, so ownership is applied as recorded.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import {
  chmod,
  lchown,
  link,
  lstat,
  lutimes,
  mkdir,
  open,
  readdir,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import { resolveInRoot } from './root-path.js';
import type { TarEntry, TarItem } from './tar-reader.js';

const run = promisify(execFile);

/** What applying a layer did. */
export interface ApplyStats {
  entries: number;
  fileBytes: number;
  whiteouts: number;
  /** Extended attributes set. */
  xattrs: number;
  /** Extended attributes that could not be set (no `setfattr` on the host). */
  xattrsSkipped: number;
}

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';

interface PendingXattr {
  readonly path: string;
  readonly name: string;
  readonly value: Buffer;
}

/** Applies a layer's entries onto `root`; `scratchDir` (outside the root) holds temporary files. */
export async function applyLayer(
  root: string,
  items: AsyncIterable<TarItem>,
  scratchDir: string,
): Promise<ApplyStats> {
  const stats: ApplyStats = { entries: 0, fileBytes: 0, whiteouts: 0, xattrs: 0, xattrsSkipped: 0 };
  const created = new Set<string>();
  const dirTimes: { path: string; mtime: number }[] = [];
  const xattrs: PendingXattr[] = [];
  for await (const { entry, body } of items) {
    stats.entries++;
    if (entry.path === '') continue;
    const name = posix.basename(entry.path);
    if (name.startsWith(WHITEOUT)) {
      stats.whiteouts++;
      await applyWhiteout(root, entry.path, created);
      continue;
    }
    const loc = await resolveInRoot(root, entry.path, { create: true });
    if (loc === undefined) continue;
    await place(root, loc.path, entry, body, stats);
    created.add(entry.path);
    if (entry.type === 'directory') dirTimes.push({ path: loc.path, mtime: entry.mtime });
    for (const [k, v] of Object.entries(entry.xattrs))
      xattrs.push({ path: loc.path, name: k, value: v });
  }
  // Children change their directory's mtime: set directories' times last, deepest first.
  for (const d of dirTimes.reverse()) await utimes(d.path, d.mtime, d.mtime);
  await setXattrs(xattrs, stats, scratchDir);
  return stats;
}

async function applyWhiteout(
  root: string,
  path: string,
  created: ReadonlySet<string>,
): Promise<void> {
  const dir = posix.dirname(path) === '.' ? '' : posix.dirname(path);
  const name = posix.basename(path);
  if (name === OPAQUE) {
    const loc = await resolveInRoot(root, dir, { create: false, followFinal: true });
    if (loc === undefined) return;
    let children: string[];
    try {
      children = await readdir(loc.path);
    } catch {
      return;
    }
    for (const child of children) {
      const rel = dir === '' ? child : `${dir}/${child}`;
      if (!created.has(rel)) await rm(join(loc.path, child), { recursive: true, force: true });
    }
    return;
  }
  const target = dir === '' ? name.slice(WHITEOUT.length) : `${dir}/${name.slice(WHITEOUT.length)}`;
  if (created.has(target)) return;
  const loc = await resolveInRoot(root, target, { create: false });
  if (loc !== undefined) await rm(loc.path, { recursive: true, force: true });
}

async function place(
  root: string,
  dest: string,
  entry: TarEntry,
  body: AsyncIterable<Buffer>,
  stats: ApplyStats,
): Promise<void> {
  const existing = await lstat(dest).catch(() => undefined);
  if (entry.type === 'directory') {
    if (existing !== undefined && !existing.isDirectory()) await rm(dest, { force: true });
    if (existing === undefined || !existing.isDirectory()) await mkdir(dest, { mode: 0o700 });
    await lchown(dest, entry.uid, entry.gid);
    await chmod(dest, entry.mode);
    return;
  }
  if (existing !== undefined) await rm(dest, { recursive: existing.isDirectory(), force: true });
  switch (entry.type) {
    case 'file':
      stats.fileBytes += await writeBody(dest, body);
      break;
    case 'symlink':
      await symlink(entry.linkname, dest);
      await lchown(dest, entry.uid, entry.gid);
      await lutimes(dest, entry.mtime, entry.mtime);
      return;
    case 'hardlink': {
      const target = await resolveInRoot(root, entry.linkname, { create: false });
      if (target === undefined) throw invalidLink(entry);
      await link(target.path, dest).catch((err: unknown) => {
        throw invalidLink(entry, err);
      });
      return;
    }
    case 'char':
    case 'block':
    case 'fifo':
      await makeNode(dest, entry);
  }
  await lchown(dest, entry.uid, entry.gid);
  await chmod(dest, entry.mode);
  await utimes(dest, entry.mtime, entry.mtime);
}

async function writeBody(dest: string, body: AsyncIterable<Buffer>): Promise<number> {
  const fh = await open(dest, 'wx', 0o600);
  let written = 0;
  try {
    for await (const chunk of body) {
      await fh.write(chunk, 0, chunk.length, written);
      written += chunk.length;
    }
  } finally {
    await fh.close();
  }
  return written;
}

async function makeNode(dest: string, entry: TarEntry): Promise<void> {
  const kind = entry.type === 'char' ? 'c' : entry.type === 'block' ? 'b' : 'p';
  const args =
    kind === 'p' ? [dest, 'p'] : [dest, kind, String(entry.devmajor), String(entry.devminor)];
  try {
    await run('mknod', args);
  } catch (err) {
    throw new AenvError('IMAGE_CONVERT_FAILED', `mknod ${entry.path} failed`, { cause: err });
  }
}

function invalidLink(entry: TarEntry, cause?: unknown): AenvError {
  return new AenvError(
    'IMAGE_INVALID',
    `hard link '${entry.path}' names '${entry.linkname}', which the image does not have`,
    {
      cause,
    },
  );
}

/** Escapes a path for `setfattr --restore` (getfattr's dump format). */
export function escapeDumpPath(path: string): string {
  let out = '';
  for (const b of Buffer.from(path, 'utf8')) {
    out +=
      b <= 0x20 || b >= 0x7f || b === 0x5c
        ? `\\${b.toString(8).padStart(3, '0')}`
        : String.fromCharCode(b);
  }
  return out;
}

async function setXattrs(
  xattrs: readonly PendingXattr[],
  stats: ApplyStats,
  scratchDir: string,
): Promise<void> {
  if (xattrs.length === 0) return;
  const dump = xattrs
    .map((x) => `# file: ${escapeDumpPath(x.path)}\n${x.name}=0x${x.value.toString('hex')}\n`)
    .join('\n');
  const file = join(scratchDir, 'xattrs.dump');
  await writeFile(file, `${dump}\n`, { mode: 0o600 });
  try {
    await run('setfattr', ['-h', `--restore=${file}`]);
    stats.xattrs += xattrs.length;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new AenvError('IMAGE_CONVERT_FAILED', 'setting extended attributes failed', {
        cause: err,
      });
    }
    stats.xattrsSkipped += xattrs.length;
  } finally {
    await rm(file, { force: true });
  }
}
