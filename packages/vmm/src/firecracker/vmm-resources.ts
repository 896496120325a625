/**
 * The host resources one Firecracker process needs before it starts,
 * acquired in order with an undo step each (a {@link Cleanup}): the jail
 * (when configured), NBD devices for NBD drives, the staged files, the
 * log/metrics FIFOs and, last, the drive descriptors it inherits.
 *
 * On failure everything acquired so far is released and the error is
 * rethrown; on success the caller hands `resources` to the instance, which
 * releases them when the VMM ends.
 *
 * @module
 */
import { closeSync, openSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError, Cleanup } from '@aenv/shared';
import type { DriveSpec } from '../driver.js';
import { notSupported } from '../errors.js';
import type { FirecrackerDrive } from './firecracker-config.js';
import type { NbdAttacher } from './nbd-attachment.js';
import { VmmTelemetry } from './vmm-telemetry.js';
import {
  Jail,
  directLayout,
  fdDrivePath,
  jailDrivePath,
  type JailerOptions,
  type VmmLayout,
} from './vmm-layout.js';

/** A host file the VMM must open, and where it sees it inside a jail. */
export interface FileToExpose {
  readonly host: string;
  readonly jailPath: string;
  readonly writable: boolean;
}

/** What {@link prepareVmm} needs. */
export interface PrepareOptions {
  readonly id: string;
  readonly runDir: string;
  readonly firecracker: string;
  readonly jailer: JailerOptions | undefined;
  readonly drives: readonly DriveSpec[];
  readonly driveDefaults: Pick<FirecrackerDrive, 'ioEngine' | 'cacheType'>;
  readonly files: readonly FileToExpose[];
  readonly nbd: NbdAttacher;
}

/** What was acquired. */
export interface PreparedVmm {
  readonly layout: VmmLayout;
  readonly drives: readonly FirecrackerDrive[];
  /** Paths of `files` as the VMM sees them, in order. */
  readonly files: readonly string[];
  /** Drive descriptors (direct layout), to become the child's fds 3, 4, ... */
  readonly fds: readonly number[];
  readonly telemetry: VmmTelemetry;
  /** Undo steps of everything above (fds excepted: the launch closes them). */
  readonly resources: Cleanup;
}

/** Where drive `d`'s bytes are on the host (attaching NBD exports). */
async function hostSource(d: DriveSpec, nbd: NbdAttacher, resources: Cleanup): Promise<string> {
  if (d.source.kind === 'nbd') {
    const device = await nbd.attach(d.source, d.readOnly);
    resources.add(`detach ${device.path}`, () => device.detach());
    return device.path;
  }
  if (d.source.format !== 'raw') {
    throw notSupported(
      'firecracker',
      `${d.source.format} drives`,
      'Firecracker reads raw files and block devices only',
    );
  }
  return d.source.path;
}

async function stageAll(
  o: PrepareOptions,
  layout: VmmLayout,
  sources: readonly string[],
): Promise<{ drives: FirecrackerDrive[]; files: string[] }> {
  const drives = o.drives.map((d, i) => ({
    id: d.id,
    path: layout.jail === null ? fdDrivePath(i) : jailDrivePath(d.id),
    readOnly: d.readOnly,
    ...o.driveDefaults,
  }));
  const jail = layout.jail;
  if (jail === null) return { drives, files: o.files.map((f) => f.host) };
  for (const [i, d] of drives.entries())
    await jail.stage(sources[i] as string, d.path, !d.readOnly);
  for (const f of o.files) await jail.stage(f.host, f.jailPath, f.writable);
  return { drives, files: o.files.map((f) => f.jailPath) };
}

function openDrives(sources: readonly string[], drives: readonly DriveSpec[]): number[] {
  const fds: number[] = [];
  try {
    drives.forEach((d, i) => fds.push(openSync(sources[i] as string, d.readOnly ? 'r' : 'r+')));
    return fds;
  } catch (err) {
    for (const fd of fds) closeSync(fd);
    throw err;
  }
}

/**
 * Acquires everything (see the module comment).
 * @throws {AenvError} `VMM_NOT_SUPPORTED` (qcow2, NBD without the host
 *   support), `VMM_DRIVE_ATTACH_FAILED`, `INVALID_ARGUMENT` (a jail path
 *   too long for a socket), `VMM_START_FAILED` (staging, a drive that
 *   cannot be opened).
 */
export async function prepareVmm(o: PrepareOptions): Promise<PreparedVmm> {
  const resources = new Cleanup();
  try {
    let layout = directLayout(o.runDir);
    if (o.jailer !== undefined) {
      const jail = await Jail.create(o.jailer, o.firecracker, o.id);
      resources.add('remove jail', () => jail.remove());
      layout = jail.layout();
    }
    const sources: string[] = [];
    for (const d of o.drives) sources.push(await hostSource(d, o.nbd, resources));
    const staged = await stageAll(o, layout, sources);
    const owner = o.jailer === undefined ? undefined : { uid: o.jailer.uid, gid: o.jailer.gid };
    const telemetry = await VmmTelemetry.open(layout, join(o.runDir, 'firecracker.log'), owner);
    resources.add('close telemetry', () => telemetry.close());
    resources.add('remove vsock socket', () => rm(layout.vsock.host, { force: true }));
    const fds = layout.jail === null ? openDrives(sources, o.drives) : [];
    return { layout, drives: staged.drives, files: staged.files, fds, telemetry, resources };
  } catch (err) {
    await resources.run().catch(() => undefined);
    if (err instanceof AenvError) throw err;
    throw new AenvError('VMM_START_FAILED', `VM ${o.id}: ${(err as Error).message}`, {
      cause: err,
      fields: { 'sandbox.id': o.id },
    });
  }
}
