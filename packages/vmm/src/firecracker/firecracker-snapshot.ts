/**
 * Saving Firecracker snapshots (`PUT /snapshot/create`) into an aenv
 * snapshot directory: `vmstate` (Firecracker's microVM state file),
 * `memory` (guest RAM) and `manifest.json` (written last).
 *
 * - `Full`: Firecracker writes all of guest memory.
 * - `Diff`: Firecracker writes only the pages dirtied since the VM's last
 *   snapshot or load (needs dirty-page tracking), as a sparse file. A diff
 *   alone cannot be resumed, so it is merged at once: onto a copy
 *   (reflinked where the filesystem can) of the base memory file with
 *   Firecracker's `snapshot-editor edit-memory rebase`. A VM that was
 *   booted and never snapshotted has no base: untouched guest memory is
 *   zero, so its diff already is the whole memory (sparse). Either way the
 *   result is an ordinary, self-contained snapshot; the manifest records
 *   the type and the parent.
 *
 * Under the jailer Firecracker writes inside its chroot; the files are then
 * moved out (a rename on the same filesystem).
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import { notSupported } from '../errors.js';
import {
  MANIFEST_FILE,
  sealManifest,
  writeManifest,
  type SnapshotManifest,
} from '../snapshot-manifest.js';
import type { FirecrackerInstance } from './firecracker-instance.js';
import { moveOut, type Jail } from './vmm-layout.js';

const run = promisify(execFile);

/** File names inside a snapshot directory. */
export const FC_SNAPSHOT_FILES = {
  state: 'vmstate',
  memory: 'memory',
  diff: 'memory.diff',
} as const;

/** Snapshot types of `PUT /snapshot/create`. */
export type SnapshotType = 'Full' | 'Diff';

/** What a snapshot records about the VM (and a restore must repeat). */
export interface FcVmRecord {
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly cpuModel: string;
  readonly kernel: string;
  readonly initrd: string | null;
  readonly cmdline: string;
  readonly drives: readonly { readonly id: string; readonly readOnly: boolean }[];
  readonly mac: string | null;
  /** Guest CID of the vsock device, 0 for none. */
  readonly vsockCid: number;
  readonly balloon: boolean;
  readonly entropy: boolean;
}

/** What {@link saveFcSnapshot} needs. */
export interface FcSaveContext {
  readonly id: string;
  readonly instance: FirecrackerInstance;
  readonly record: FcVmRecord;
  readonly vmmVersion: string;
  readonly drivePaths: 'fd' | 'jail';
  readonly jail: Jail | null;
  readonly type: SnapshotType;
  /** Host path of the memory a diff applies to; null for a never-snapshotted booted VM. */
  readonly base: string | null;
  /** Firecracker's `snapshot-editor`, needed to merge a diff onto a base. */
  readonly snapshotEditor: string | undefined;
  readonly trackDirtyPages: boolean;
}

/** How long `PUT /snapshot/create` may take: a floor plus time per MiB written. */
export function createTimeoutMs(memoryMiB: number): number {
  return 30_000 + memoryMiB * 20;
}

/**
 * Refuses a snapshot this VM cannot take, before anything is written.
 * @throws {AenvError} `VMM_NOT_SUPPORTED`.
 */
export function checkSnapshotType(
  ctx: Pick<FcSaveContext, 'type' | 'base' | 'snapshotEditor' | 'trackDirtyPages'>,
): void {
  if (ctx.type !== 'Diff') return;
  if (!ctx.trackDirtyPages) {
    throw notSupported(
      'firecracker',
      "snapshot({ type: 'Diff' })",
      'dirty page tracking is off (driver option trackDirtyPages)',
    );
  }
  if (ctx.base !== null && ctx.snapshotEditor === undefined) {
    throw notSupported(
      'firecracker',
      "snapshot({ type: 'Diff' })",
      'merging a diff onto its base needs snapshot-editor (driver option snapshotEditor)',
    );
  }
}

async function prepareDir(dir: string): Promise<boolean> {
  const created = (await mkdir(dir, { recursive: true })) !== undefined;
  if ((await readdir(dir)).length > 0) {
    throw new AenvError('INVALID_ARGUMENT', `snapshot directory ${dir} is not empty`, {
      fields: { dir },
    });
  }
  return created;
}

/** Asks Firecracker for the files and brings them into `dir`; returns the memory file it wrote. */
async function writeFiles(ctx: FcSaveContext, dir: string): Promise<string> {
  const memName = ctx.type === 'Diff' ? FC_SNAPSHOT_FILES.diff : FC_SNAPSHOT_FILES.memory;
  const where = ctx.jail === null ? dir : await ctx.jail.ownedDir('/snapshot');
  const vmmDir = ctx.jail === null ? dir : '/snapshot';
  await ctx.instance.api.createSnapshot(
    {
      snapshot_type: ctx.type,
      snapshot_path: join(vmmDir, FC_SNAPSHOT_FILES.state),
      mem_file_path: join(vmmDir, memName),
    },
    createTimeoutMs(ctx.record.memoryMiB),
  );
  if (ctx.jail !== null) {
    await moveOut(join(where, FC_SNAPSHOT_FILES.state), join(dir, FC_SNAPSHOT_FILES.state));
    await moveOut(join(where, memName), join(dir, memName));
  }
  return join(dir, memName);
}

/** Turns a diff into a resumable memory file (see the module comment). */
async function mergeDiff(ctx: FcSaveContext, diff: string, dir: string): Promise<void> {
  const memory = join(dir, FC_SNAPSHOT_FILES.memory);
  if (ctx.base === null) {
    await rename(diff, memory);
    return;
  }
  await run('cp', ['--reflink=auto', '--sparse=always', ctx.base, memory]);
  await run(ctx.snapshotEditor as string, [
    'edit-memory',
    'rebase',
    '--memory-path',
    memory,
    '--diff-path',
    diff,
  ]);
  await rm(diff, { force: true });
}

function manifestOf(ctx: FcSaveContext, stateBytes: number): SnapshotManifest {
  const r = ctx.record;
  return sealManifest({
    magic: 'aenv-vm-snapshot',
    formatVersion: 1,
    createdAt: new Date().toISOString(),
    vmId: ctx.id,
    driver: 'firecracker',
    mode: 'kvm',
    vmmVersion: ctx.vmmVersion,
    machine: { vcpus: r.vcpus, memoryMiB: r.memoryMiB, cpuModel: r.cpuModel },
    boot: { kernel: r.kernel, initrd: r.initrd, cmdline: r.cmdline },
    drives: r.drives.map((d) => ({ id: d.id, readOnly: d.readOnly })),
    network: r.mac === null ? null : { mac: r.mac },
    memory: { file: FC_SNAPSHOT_FILES.memory, bytes: r.memoryMiB * 1024 * 1024 },
    state: { file: FC_SNAPSHOT_FILES.state, bytes: stateBytes },
    vmm: {
      drivePaths: ctx.drivePaths,
      snapshotType: ctx.type,
      parent: ctx.type === 'Diff' && ctx.base !== null ? dirname(ctx.base) : '',
      vsockCid: r.vsockCid,
      balloon: r.balloon,
      entropy: r.entropy,
    },
  });
}

/**
 * Saves the paused VM into `dir`; the VM stays paused (the caller ends it
 * when the snapshot is to be its last act).
 * @throws {AenvError} `VMM_SNAPSHOT_FAILED` (the partial snapshot is removed).
 */
export async function saveFcSnapshot(ctx: FcSaveContext, dir: string): Promise<SnapshotManifest> {
  const created = await prepareDir(dir);
  try {
    const written = await writeFiles(ctx, dir);
    if (ctx.type === 'Diff') await mergeDiff(ctx, written, dir);
    const stateBytes = (await stat(join(dir, FC_SNAPSHOT_FILES.state))).size;
    const manifest = manifestOf(ctx, stateBytes);
    await writeManifest(dir, manifest);
    return manifest;
  } catch (err) {
    await removeSnapshotFiles(dir, created);
    if (ctx.jail !== null)
      await rm(ctx.jail.hostPath('/snapshot'), { recursive: true, force: true });
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
  const names = [...Object.values(FC_SNAPSHOT_FILES), MANIFEST_FILE, `${MANIFEST_FILE}.tmp`];
  await Promise.all(names.map((n) => rm(join(dir, n), { force: true })));
}
