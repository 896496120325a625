/**
 * Saving and loading QEMU snapshots (runtime-lab §C).
 *
 * A snapshot directory holds `vmstate` (QEMU's migration stream), `memory`
 * (guest RAM) and `manifest.json` (written last). How memory is saved
 * depends on how the VM maps it:
 * - shared file (a booted VM, or one restored from an inline snapshot): the
 *   stream skips RAM (`x-ignore-shared`), a few tens of KB in a few ms; the
 *   memory file itself becomes the snapshot's: moved when the VM ends into
 *   the snapshot, copied (sparse) when it stays paused;
 * - private mapping (a VM restored copy-on-write): QEMU 7.2 cannot write a
 *   private mapping back to a file, so RAM goes inline into the stream
 *   (`memory.file` null), costing time in proportion to touched memory.
 *   Restoring such a snapshot loads RAM into a fresh shared file, so the
 *   next snapshot of that VM is cheap again.
 * A snapshot's memory file is never mapped shared again: a shared restore
 * would write into it and corrupt every later restore.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import {
  sealManifest,
  writeManifest,
  MANIFEST_FILE,
  type SnapshotManifest,
} from '../snapshot-manifest.js';
import type { QemuMachine } from './qemu-args.js';
import type { QemuInstance } from './qemu-instance.js';
import type { QmpClient } from './qmp-client.js';

const run = promisify(execFile);

/** Grace for QEMU to quit after a snapshot before it is killed. */
const DEFAULT_QUIT_GRACE_MS = 3000;

/** File names inside a snapshot directory. */
export const SNAPSHOT_FILES = { state: 'vmstate', memory: 'memory' } as const;

/** What {@link saveSnapshot} needs from the VM. */
export interface SaveContext {
  readonly id: string;
  readonly instance: QemuInstance;
  readonly machine: QemuMachine;
  readonly memory: { readonly path: string; readonly share: boolean };
  readonly vmmVersion: string;
  readonly after: 'stop' | 'pause';
}

/** Quotes a path for the `/bin/sh -c` that QEMU's `exec:` migration runs. */
export function shellQuote(path: string): string {
  return `'${path.replaceAll("'", `'\\''`)}'`;
}

/** How long a migration may take: a floor, plus time per MiB when RAM is in the stream. */
export function migrationTimeoutMs(memoryMiB: number, ramInStream: boolean): number {
  return 30_000 + (ramInStream ? memoryMiB * 40 : 0);
}

/**
 * Sets migration capabilities, runs `start`, and waits for the MIGRATION
 * event to report completion.
 * @throws {AenvError} `VMM_QMP_ERROR` with QEMU's error text, `VMM_TIMEOUT`.
 */
export async function runMigration(
  qmp: QmpClient,
  ignoreShared: boolean,
  timeoutMs: number,
  start: () => Promise<unknown>,
): Promise<void> {
  await qmp.execute('migrate-set-capabilities', {
    capabilities: [
      { capability: 'x-ignore-shared', state: ignoreShared },
      { capability: 'events', state: true },
    ],
  });
  const done = qmp.waitForEvent(
    'MIGRATION',
    (e) =>
      e.data.status === 'completed' || e.data.status === 'failed' || e.data.status === 'cancelled',
    timeoutMs,
  );
  done.catch(() => undefined);
  await start();
  const event = await done;
  if (event.data.status !== 'completed') {
    const info = await qmp
      .execute<{ 'error-desc'?: string }>('query-migrate')
      .catch((): { 'error-desc'?: string } => ({}));
    throw new AenvError(
      'VMM_QMP_ERROR',
      `migration ${String(event.data.status)}: ${info['error-desc'] ?? 'no detail'}`,
    );
  }
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

async function keepMemory(ctx: SaveContext, dir: string): Promise<string | null> {
  if (!ctx.memory.share) return null;
  const target = join(dir, SNAPSHOT_FILES.memory);
  if (ctx.after === 'pause') {
    await run('cp', ['--sparse=always', '--reflink=auto', ctx.memory.path, target]);
    return SNAPSHOT_FILES.memory;
  }
  try {
    await rename(ctx.memory.path, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await run('cp', ['--sparse=always', ctx.memory.path, target]);
    await rm(ctx.memory.path, { force: true });
  }
  return SNAPSHOT_FILES.memory;
}

/**
 * Saves the paused VM into `dir` (see the module comment); with `after:
 * 'stop'` QEMU has exited when this returns.
 * @throws {AenvError} `VMM_SNAPSHOT_FAILED` (the directory's content is removed).
 */
export async function saveSnapshot(ctx: SaveContext, dir: string): Promise<SnapshotManifest> {
  const created = await prepareDir(dir);
  const statePath = join(dir, SNAPSHOT_FILES.state);
  // the memory file moves into the snapshot: the instance must not delete it on exit
  const moving = ctx.memory.share && ctx.after === 'stop';
  let disowned = false;
  try {
    const { qmp } = ctx.instance;
    const timeout = migrationTimeoutMs(ctx.machine.memoryMiB, !ctx.memory.share);
    await runMigration(qmp, ctx.memory.share, timeout, () =>
      qmp.execute('migrate', { uri: `exec:cat > ${shellQuote(statePath)}` }),
    );
    if (ctx.after === 'stop') {
      if (moving) ctx.instance.disown(ctx.memory.path);
      disowned = moving;
      await ctx.instance.quit(DEFAULT_QUIT_GRACE_MS);
    }
    const memoryFile = await keepMemory(ctx, dir);
    const manifest = sealManifest({
      magic: 'aenv-vm-snapshot',
      formatVersion: 1,
      createdAt: new Date().toISOString(),
      vmId: ctx.id,
      driver: 'qemu',
      mode: ctx.machine.mode,
      vmmVersion: ctx.vmmVersion,
      machine: {
        vcpus: ctx.machine.vcpus,
        memoryMiB: ctx.machine.memoryMiB,
        cpuModel: ctx.machine.cpuModel,
      },
      boot: {
        kernel: ctx.machine.kernel,
        initrd: ctx.machine.initrd,
        cmdline: ctx.machine.cmdline,
      },
      drives: ctx.machine.drives.map((d) => ({ id: d.id, readOnly: d.readOnly })),
      network: ctx.machine.network === null ? null : { mac: ctx.machine.network.mac },
      memory: {
        file: memoryFile,
        bytes: memoryFile === null ? 0 : ctx.machine.memoryMiB * 1024 * 1024,
      },
      state: { file: SNAPSHOT_FILES.state, bytes: (await stat(statePath)).size },
      vmm: { 'x-ignore-shared': ctx.memory.share },
    });
    await writeManifest(dir, manifest);
    return manifest;
  } catch (err) {
    await removeSnapshotFiles(dir, created);
    if (disowned) await rm(ctx.memory.path, { force: true });
    throw new AenvError(
      'VMM_SNAPSHOT_FAILED',
      `snapshot of VM ${ctx.id} into ${dir} failed: ${(err as Error).message}`,
      {
        cause: err,
        fields: { 'sandbox.id': ctx.id, dir },
      },
    );
  }
}

async function removeSnapshotFiles(dir: string, removeDir: boolean): Promise<void> {
  if (removeDir) {
    await rm(dir, { recursive: true, force: true });
    return;
  }
  const names = [
    SNAPSHOT_FILES.state,
    SNAPSHOT_FILES.memory,
    MANIFEST_FILE,
    `${MANIFEST_FILE}.tmp`,
  ];
  await Promise.all(names.map((n) => rm(join(dir, n), { force: true })));
}

/**
 * Loads a snapshot's device state (and inline RAM) into a QEMU started with
 * `-incoming defer`, leaving the guest paused.
 * @throws {AenvError} `VMM_QMP_ERROR`, `VMM_TIMEOUT`.
 */
export async function loadSnapshotState(
  qmp: QmpClient,
  manifest: SnapshotManifest,
  dir: string,
): Promise<void> {
  const ignoreShared = manifest.vmm['x-ignore-shared'] === true;
  const timeout = migrationTimeoutMs(manifest.machine.memoryMiB, manifest.memory.file === null);
  const statePath = join(dir, manifest.state.file);
  await runMigration(qmp, ignoreShared, timeout, () =>
    qmp.execute('migrate-incoming', { uri: `exec:cat ${shellQuote(statePath)}` }),
  );
}
