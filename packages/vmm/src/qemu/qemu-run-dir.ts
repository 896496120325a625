/**
 * A qemu VM's run directory: its file names, its ownership when QEMU runs
 * as another user, and where a restored VM's base RAM file is placed.
 *
 * Files (one run directory per VM): `qmp.sock`, `serial.sock`, `qemu.pid`,
 * `mig.sock` while a migration runs, and guest RAM: `memory` (a booted VM's
 * own file) or `memory.base` (a hard link to the snapshot's `memory` that a
 * restored VM maps copy-on-write). The link keeps the base alive for as
 * long as the VM runs, whatever happens to the snapshot directory, and lets
 * a later snapshot link the same file again. Where the snapshot is on
 * another filesystem the VM maps the snapshot's path itself (and its own
 * snapshots copy it).
 *
 * @module
 */
import { chmod, chown, link, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { QemuIdentity } from './qemu-args.js';
import { sealRamFile, type RamLayout } from './qemu-snapshot.js';

/** Paths inside a run directory. */
export interface RunFiles {
  readonly qmp: string;
  readonly serial: string;
  readonly pid: string;
  readonly memory: string;
  readonly base: string;
}

/** The files of the VM whose run directory is `runDir`. */
export function runFiles(runDir: string): RunFiles {
  return {
    qmp: join(runDir, 'qmp.sock'),
    serial: join(runDir, 'serial.sock'),
    pid: join(runDir, 'qemu.pid'),
    memory: join(runDir, 'memory'),
    base: join(runDir, 'memory.base'),
  };
}

/**
 * Creates the run directory; with a QEMU user it belongs to that user and
 * nobody else may enter it.
 */
export async function prepareRunDir(runDir: string, user?: QemuIdentity): Promise<void> {
  await mkdir(runDir, { recursive: true });
  if (user === undefined) return;
  await chown(runDir, user.uid, user.gid);
  await chmod(runDir, 0o700);
}

/**
 * Places a snapshot's base RAM file for a restore (see the module comment).
 * @returns the layout and whether the path is the VM's own link (to remove at the end).
 */
export async function placeBaseRam(
  snapshotRam: string,
  runDir: string,
  ids: { readonly baseId: string; readonly source: string },
  user?: QemuIdentity,
): Promise<{ ram: RamLayout; owned: boolean }> {
  const target = runFiles(runDir).base;
  await rm(target, { force: true });
  let path = target;
  try {
    await link(snapshotRam, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    path = snapshotRam;
  }
  // snapshots written while QEMU ran as root (or another group) are not yet readable by this one
  if (user !== undefined && (await stat(path)).gid !== user.gid) await sealRamFile(path, user);
  return {
    ram: { kind: 'base', path, baseId: ids.baseId, source: ids.source },
    owned: path === target,
  };
}
