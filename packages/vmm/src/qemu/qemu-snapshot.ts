/**
 * Saving QEMU snapshots (docs/snapshots.md has the design and figures).
 *
 * A snapshot directory holds `vmstate` (QEMU's device state; RAM is never
 * in it: QEMU sees every RAM file as shared and skips it with
 * `x-ignore-shared`), `memory` (a full guest RAM file), optionally
 * `memory.diff` (pages that differ from `memory`) and `manifest.json`
 * (written last). What is saved depends on the VM's {@link RamLayout}:
 * - `own` (a booted VM): its RAM file becomes `memory`, moved when the VM
 *   ends into the snapshot, copied (sparse) when it stays paused. Cost: the
 *   device state, plus the copy with `after: 'pause'`.
 * - `base` (a restored VM, mapping a snapshot's `memory` copy-on-write):
 *   `memory` is a hard link to that same base file, and `memory.diff` holds
 *   every page the VM's mapping has of its own (found in
 *   `/proc/<pid>/pagemap`). Cost: the device state plus the changed pages,
 *   whatever the RAM size. The diff is relative to the base, never to
 *   another diff, so a restore reads at most two files and deleting any
 *   other snapshot directory never breaks this one.
 * A `memory` file is made read-only (0440) once it is in a snapshot; no VM
 * ever maps it writable again.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, chown, link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import {
  sealManifest,
  writeManifest,
  MANIFEST_FILE,
  type SnapshotManifest,
} from '../snapshot-manifest.js';
import { saveDeviceState } from './migration-channel.js';
import { findRamMapping, saveRamDiff, type RamDiffInfo } from './process-memory.js';
import type { QemuIdentity, QemuMachine } from './qemu-args.js';
import type { QemuInstance } from './qemu-instance.js';

const run = promisify(execFile);

/** Grace for QEMU to quit after a snapshot before it is killed. */
const DEFAULT_QUIT_GRACE_MS = 3000;

/** File names inside a snapshot directory. */
export const SNAPSHOT_FILES = {
  state: 'vmstate',
  memory: 'memory',
  diff: 'memory.diff',
} as const;

/**
 * How a VM's guest RAM is backed.
 * - `own`: a file of its own (`<runDir>/memory`), really shared;
 * - `base`: a snapshot's `memory` file mapped copy-on-write through the
 *   private-RAM interposer; `path` is what QEMU maps (a hard link in the run
 *   directory, or the snapshot's own path where linking was impossible).
 */
export type RamLayout =
  | { readonly kind: 'own'; readonly path: string }
  | {
      readonly kind: 'base';
      readonly path: string;
      /** Id shared by every snapshot built on this base file. */
      readonly baseId: string;
      /** The snapshot directory the VM was restored from. */
      readonly source: string;
    };

/** What {@link saveSnapshot} needs from the VM. */
export interface SaveContext {
  readonly id: string;
  readonly instance: QemuInstance;
  readonly machine: QemuMachine;
  readonly ram: RamLayout;
  readonly runDir: string;
  readonly vmmVersion: string;
  readonly after: 'stop' | 'pause';
  readonly qemuUser?: QemuIdentity;
}

async function prepareDir(dir: string): Promise<boolean> {
  const created = (await mkdir(dir, { recursive: true })) !== undefined;
  const entries = await readdir(dir);
  if (entries.length > 0) {
    throw new AenvError('INVALID_ARGUMENT', `snapshot directory ${dir} is not empty`, {
      fields: { dir },
    });
  }
  return created;
}

/** Makes a RAM file part of a snapshot: read-only, readable by QEMU's group. */
export async function sealRamFile(path: string, qemuUser?: QemuIdentity): Promise<void> {
  if (qemuUser !== undefined) await chown(path, 0, qemuUser.gid);
  await chmod(path, 0o440);
}

/** Hard-links `from` to `to`, copying (sparse) when they are on different filesystems. */
export async function linkOrCopy(from: string, to: string): Promise<'link' | 'copy'> {
  try {
    await link(from, to);
    return 'link';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await run('cp', ['--sparse=always', '--reflink=auto', from, to]);
    return 'copy';
  }
}

/** Moves the VM's own RAM file into the snapshot (or copies it when the VM stays). */
async function keepOwnRam(ctx: SaveContext, path: string, target: string): Promise<void> {
  if (ctx.after === 'pause') {
    await run('cp', ['--sparse=always', '--reflink=auto', path, target]);
    return;
  }
  try {
    await rename(path, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await run('cp', ['--sparse=always', path, target]);
    await rm(path, { force: true });
  }
}

function manifestOf(
  ctx: SaveContext,
  stateBytes: number,
  baseId: string,
  diff: RamDiffInfo | undefined,
): SnapshotManifest {
  const m = ctx.machine;
  return sealManifest({
    magic: 'aenv-vm-snapshot',
    formatVersion: 1,
    createdAt: new Date().toISOString(),
    vmId: ctx.id,
    driver: 'qemu',
    mode: m.mode,
    vmmVersion: ctx.vmmVersion,
    machine: { vcpus: m.vcpus, memoryMiB: m.memoryMiB, cpuModel: m.cpuModel },
    boot: {
      kernel: m.kernel,
      initrd: m.initrd,
      cmdline: m.cmdline,
      kernelDigest: m.kernelDigest,
      initrdDigest: m.initrdDigest,
    },
    drives: m.drives.map((d) => ({ id: d.id, readOnly: d.readOnly })),
    network: m.network === null ? null : { mac: m.network.mac },
    memory: {
      file: SNAPSHOT_FILES.memory,
      bytes: m.memoryMiB * 1024 * 1024,
      baseId,
      ...(diff === undefined
        ? {}
        : { diff: { file: SNAPSHOT_FILES.diff, bytes: diff.fileBytes, pages: diff.pages } }),
    },
    parent: ctx.ram.kind === 'base' ? ctx.ram.source : null,
    state: { file: SNAPSHOT_FILES.state, bytes: stateBytes },
    vmm: { 'x-ignore-shared': true, balloon: m.balloon },
  });
}

/**
 * The RAM files of the snapshot; QEMU must still run for a `base` VM.
 * `progress.disowned` tells the caller the VM's own RAM file is no longer
 * removed by the instance (the VM has ended into the snapshot).
 */
async function saveRam(
  ctx: SaveContext,
  dir: string,
  progress: { disowned: boolean },
): Promise<RamDiffInfo | undefined> {
  const target = join(dir, SNAPSHOT_FILES.memory);
  if (ctx.ram.kind === 'own') {
    if (ctx.after === 'stop') {
      ctx.instance.disown(ctx.ram.path);
      progress.disowned = true;
      await ctx.instance.quit(DEFAULT_QUIT_GRACE_MS);
    }
    await keepOwnRam(ctx, ctx.ram.path, target);
    await sealRamFile(target, ctx.qemuUser);
    return undefined;
  }
  const pid = ctx.instance.process.pid as number;
  const bytes = ctx.machine.memoryMiB * 1024 * 1024;
  await linkOrCopy(ctx.ram.path, target);
  const mapping = await findRamMapping(pid, ctx.ram.path, bytes);
  const diff = await saveRamDiff(mapping, join(dir, SNAPSHOT_FILES.diff));
  if (ctx.after === 'stop') await ctx.instance.quit(DEFAULT_QUIT_GRACE_MS);
  return diff;
}

/**
 * Saves the paused VM into `dir` (see the module comment); with `after:
 * 'stop'` QEMU has exited when this returns.
 * @throws {AenvError} `VMM_SNAPSHOT_FAILED` (the directory's content is removed).
 */
export async function saveSnapshot(ctx: SaveContext, dir: string): Promise<SnapshotManifest> {
  const created = await prepareDir(dir);
  const statePath = join(dir, SNAPSHOT_FILES.state);
  const progress = { disowned: false };
  try {
    await saveDeviceState(ctx.instance.qmp, ctx.runDir, statePath, ctx.qemuUser);
    const diff = await saveRam(ctx, dir, progress);
    const baseId = ctx.ram.kind === 'base' ? ctx.ram.baseId : randomUUID();
    const manifest = manifestOf(ctx, (await stat(statePath)).size, baseId, diff);
    await writeManifest(dir, manifest);
    return manifest;
  } catch (err) {
    await removeSnapshotFiles(dir, created);
    // the VM ended into a snapshot that failed: its RAM file is nobody's now
    if (progress.disowned) await rm(ctx.ram.path, { force: true });
    throw new AenvError(
      'VMM_SNAPSHOT_FAILED',
      `snapshot of VM ${ctx.id} into ${dir} failed: ${(err as Error).message}`,
      { cause: err, fields: { 'sandbox.id': ctx.id, dir } },
    );
  }
}

async function removeSnapshotFiles(dir: string, removeDir: boolean): Promise<void> {
  if (removeDir) {
    await rm(dir, { recursive: true, force: true });
    return;
  }
  const names = [...Object.values(SNAPSHOT_FILES), MANIFEST_FILE, `${MANIFEST_FILE}.tmp`];
  await Promise.all(names.map((n) => rm(join(dir, n), { force: true })));
}
