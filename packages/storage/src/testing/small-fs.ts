/**
 * Test support for full disks: a small tmpfs or loop-mounted ext4 the test
 * mounts itself (root only), to fill up without touching the machine's real disks. `fill()`
 * writes a filler file until the file system is full; `free()` removes it.
 * `remove()` unmounts (lazily if busy) and deletes the mount point: call it
 * in `after`/`finally`.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir, open, rm, rmdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

function run(cmd: string, args: readonly string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, _stdout, stderr) => {
      resolve({ code: err === null ? 0 : 1, stderr });
    });
  });
}

/** Appends `size`-byte blocks until the file system refuses one (bounded by the fs size). */
async function appendUntilFull(fh: FileHandle, size: number, sizeMiB: number): Promise<void> {
  const block = Buffer.alloc(size, 1);
  try {
    for (let i = 0; i <= (sizeMiB * 2 ** 20) / size; i++) await fh.write(block);
  } catch {
    // full at this block size
  }
}

/** A mounted small file system. */
export interface SmallFs {
  readonly path: string;
  fill(): Promise<void>;
  free(): Promise<void>;
  remove(): Promise<void>;
}

/** Why a small file system cannot be mounted here, or undefined when it can. */
export function smallFsSkip(): string | undefined {
  return process.getuid?.() === 0 ? undefined : 'mounting a tmpfs needs root';
}

/**
 * An ext4 file system in a sparse image file beside `path` (`<path>.img`),
 * loop-mounted at `path`: unlike tmpfs, reading a hole of a mapped file
 * needs no space, as on a node's real disk.
 */
async function mountExt4(image: string, path: string, sizeMiB: number): Promise<void> {
  const steps: [string, string[]][] = [
    ['truncate', ['-s', `${sizeMiB}M`, image]],
    ['mkfs.ext4', ['-q', '-F', '-m', '0', '-E', 'nodiscard', image]],
    ['mount', ['-o', 'loop', image, path]],
  ];
  for (const [cmd, args] of steps) {
    const r = await run(cmd, args);
    if (r.code !== 0) {
      await rm(image, { force: true });
      throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
    }
  }
}

/**
 * Mounts a small file system of `sizeMiB` at `path` (created if needed):
 * a tmpfs, or an ext4 image loop-mounted (`type: 'ext4'`; the image file,
 * sparse, sits beside `path` and is deleted by `remove()`).
 */
export async function mountSmallFs(
  path: string,
  sizeMiB: number,
  type: 'tmpfs' | 'ext4' = 'tmpfs',
): Promise<SmallFs> {
  await mkdir(path, { recursive: true });
  const image = `${path}.img`;
  if (type === 'ext4') await mountExt4(image, path, sizeMiB);
  else {
    const o = `size=${sizeMiB}m,mode=0700`;
    const r = await run('mount', ['-t', 'tmpfs', '-o', o, 'tmpfs', path]);
    if (r.code !== 0) throw new Error(`mount tmpfs at ${path}: ${r.stderr}`);
  }
  const filler = join(path, 'filler');
  return {
    path,
    fill: async () => {
      // Appends until ENOSPC; what fitted stays, so the file system is full.
      // Smaller blocks after each ENOSPC, with an fsync between: a disk file
      // system releases blocks it had reserved for delayed allocation.
      const fh = await open(filler, 'a');
      try {
        for (const size of [1 << 20, 64 << 10, 4096, 4096]) {
          await appendUntilFull(fh, size, sizeMiB);
          await fh.sync().catch(() => undefined);
        }
      } finally {
        await fh.close();
      }
    },
    free: () => rm(filler, { force: true }),
    remove: async () => {
      const u = await run('umount', [path]);
      if (u.code !== 0) await run('umount', ['-l', path]);
      await rmdir(path).catch(() => undefined);
      await rm(image, { force: true });
    },
  };
}
