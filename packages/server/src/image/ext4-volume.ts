/**
 * The host side of image conversion: a sparse raw file holding an ext4
 * filesystem, loop-mounted while a layer is applied to it. Everything lives
 * under one work directory per conversion, inside the node's conversion
 * root, so that a daemon killed mid-conversion leaves nothing that the next
 * start cannot find: {@link removeConversionLeftovers} unmounts what is
 * mounted under the root, detaches loop devices backed by files there and
 * deletes the files.
 *
 * The filesystem is made with everything zeroed up front and never
 * discarded (`lazy_itable_init=0,lazy_journal_init=0,nodiscard`, mounted
 * `nodiscard`), so a block that held data keeps reading back what was last
 * written to it, which the block differ relies on; and a guest mounting it
 * starts no background inode-table zeroing that would dirty every sandbox.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';

const run = promisify(execFile);

/**
 * The recipe of the filesystem; part of every conversion cache key, so a
 * change here makes new layers instead of reusing incompatible ones.
 */
export const EXT4_RECIPE = 'aenv-ext4-v1:-b4096:-i8192:-m0:lazy0:nodiscard';

async function command(step: string, cmd: string, args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await run(cmd, args, { maxBuffer: 64 << 20 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    const why = e.code === 'ENOENT' ? `${cmd} is not installed` : (e.stderr ?? e.message).trim();
    const noSpace = /No space left|ENOSPC/.test(why);
    throw new AenvError(noSpace ? 'IMAGE_TOO_LARGE' : 'IMAGE_CONVERT_FAILED', `${step}: ${why}`, {
      cause: err,
    });
  }
}

/** Makes an empty ext4 filesystem of `sizeBytes` in a new sparse file. */
export async function makeFilesystem(raw: string, sizeBytes: number): Promise<void> {
  await command('truncate', 'truncate', ['-s', String(sizeBytes), raw]);
  await command('mkfs.ext4', 'mkfs.ext4', [
    '-q',
    '-F',
    '-L',
    'aenv-image',
    '-b',
    '4096',
    '-i',
    '8192',
    '-m',
    '0',
    '-E',
    'lazy_itable_init=0,lazy_journal_init=0,nodiscard',
    raw,
  ]);
}

/** Grows the filesystem in `raw` (unmounted) to `sizeBytes`. */
export async function growFilesystem(raw: string, sizeBytes: number): Promise<void> {
  await command('truncate', 'truncate', ['-s', String(sizeBytes), raw]);
  // resize2fs wants a freshly checked filesystem. e2fsck exits 1 when it
  // fixed something, which is fine; 4 and up (errors left, usage) is not.
  await run('e2fsck', ['-f', '-y', raw], { maxBuffer: 64 << 20 }).catch((err: unknown) => {
    const e = err as { code?: unknown; stderr?: string; message: string };
    if (e.code === 1) return;
    const why = e.code === 'ENOENT' ? 'e2fsck is not installed' : (e.stderr ?? e.message).trim();
    throw new AenvError('IMAGE_CONVERT_FAILED', `e2fsck: ${why}`, { cause: err });
  });
  await command('resize2fs', 'resize2fs', [raw, `${Math.floor(sizeBytes / 1024)}K`]);
}

/** A mounted raw file. */
export interface MountedVolume {
  readonly mountPoint: string;
  /** Unmounts (the loop device goes with it). Idempotent. */
  unmount(): Promise<void>;
}

/** Loop-mounts the filesystem in `raw` on `mountPoint` (an existing empty directory). */
export async function mountVolume(raw: string, mountPoint: string): Promise<MountedVolume> {
  await command('mount', 'mount', ['-t', 'ext4', '-o', 'loop,noatime,nodiscard', raw, mountPoint]);
  let done: Promise<void> | undefined;
  return {
    mountPoint,
    unmount: () => (done ??= unmount(mountPoint)),
  };
}

async function unmount(mountPoint: string): Promise<void> {
  // Flush first: if another mount namespace (a VMM jail made while this was
  // mounted) still holds the filesystem, the unmount below neither releases
  // nor flushes it, and the image file read next would be stale.
  await command('sync', 'sync', ['-f', mountPoint]);
  for (let attempt = 0; ; attempt++) {
    try {
      await command('umount', 'umount', [mountPoint]);
      return;
    } catch (err) {
      if (attempt >= 4) {
        // Busy for good (something holds a file open): detach it so nothing stays mounted.
        await command('umount', 'umount', ['-l', mountPoint]);
        throw err;
      }
      await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
    }
  }
}

/** Decodes the octal escapes of /proc/self/mountinfo paths. */
function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** Mount points at or under `dir`, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const root = resolve(dir);
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map(unescapeMountPath)
    .filter((p) => p === root || p.startsWith(root + sep))
    .sort((a, b) => b.length - a.length);
}

/** What {@link removeConversionLeftovers} removed. */
export interface ConversionLeftovers {
  readonly mounts: number;
  readonly loopDevices: number;
}

/**
 * Removes what killed conversions left under `root`: mounts, loop devices
 * backed by files there, and every file.
 */
export async function removeConversionLeftovers(root: string): Promise<ConversionLeftovers> {
  const mounts = await mountsUnder(root);
  for (const m of mounts) {
    await command('umount', 'umount', [m]).catch(() => command('umount', 'umount', ['-l', m]));
  }
  let loopDevices = 0;
  const listing = await command('losetup', 'losetup', ['-l', '-n', '-O', 'NAME,BACK-FILE']).catch(
    () => '',
  );
  const base = resolve(root) + sep;
  for (const line of listing.split('\n')) {
    const m = /^(\S+)\s+(.*?)(?: \(deleted\))?\s*$/.exec(line);
    if (m === null || !(m[2] ?? '').startsWith(base)) continue;
    await command('losetup', 'losetup', ['-d', m[1] as string]).catch(() => undefined);
    loopDevices++;
  }
  const still = await mountsUnder(root);
  if (still.length > 0) {
    // Never delete through a mount point.
    throw new AenvError('IMAGE_CONVERT_FAILED', `cannot unmount ${still.join(', ')}`);
  }
  await rm(root, { recursive: true, force: true });
  return { mounts: mounts.length, loopDevices };
}
