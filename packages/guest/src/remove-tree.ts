/**
 * Removing a build directory without ever deleting through a mount point.
 *
 * A recursive delete crosses into whatever is mounted below the directory;
 * debootstrap mounts /proc and /sys in its target and may bind-mount the
 * host's /dev. So: unmount (lazily) everything below first, re-check, and
 * refuse to delete while anything is still mounted there.
 *
 * @module
 */
import { readFile, rm } from 'node:fs/promises';
import { AenvError } from '@aenv/shared';
import { runCommand } from './run-command.js';

/** Mount points at or below `dir` in `/proc/self/mounts` text, deepest first (pure). */
export function mountsBelow(mountsText: string, dir: string): string[] {
  const unescape = (s: string): string =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return mountsText
    .split('\n')
    .map((l) => unescape(l.split(' ')[1] ?? ''))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

async function currentMounts(dir: string): Promise<string[]> {
  return mountsBelow(await readFile('/proc/self/mounts', 'utf8'), dir);
}

/**
 * Unmounts everything at or below `dir`, then deletes it recursively.
 * @throws {AenvError} `GUEST_BUILD_FAILED` when something stays mounted (nothing is deleted then).
 */
export async function removeTree(dir: string): Promise<void> {
  for (const m of await currentMounts(dir)) {
    await runCommand('umount', ['-l', m], { step: 'unmount build leftovers' }).catch(
      () => undefined,
    );
  }
  const left = await currentMounts(dir);
  if (left.length > 0) {
    throw new AenvError(
      'GUEST_BUILD_FAILED',
      `still mounted, not removing ${dir}: ${left.join(', ')}`,
      {
        fields: { dir },
      },
    );
  }
  await rm(dir, { recursive: true, force: true });
}
