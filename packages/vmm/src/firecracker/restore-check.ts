/**
 * Whether a snapshot may be restored by this firecracker driver, with this
 * spec: the checks that turn "Firecracker failed to load the snapshot" (and
 * then ended its process) into a clear error before anything is started.
 *
 * A snapshot records the driver, virtualization mode and VMM version it
 * came from and is refused elsewhere; Firecracker snapshots also record the
 * drive paths the VMM opened, so the drive-path scheme (inherited
 * descriptors or jail paths) must match too.
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { RestoreSpec } from '../driver.js';
import type { SnapshotManifest } from '../snapshot-manifest.js';

/** What this driver instance is. */
export interface FcRestoreHost {
  readonly vmmVersion: string;
  readonly drivePaths: 'fd' | 'jail';
}

function incompatible(dir: string, why: string): AenvError {
  return new AenvError(
    'VMM_SNAPSHOT_INCOMPATIBLE',
    `snapshot ${dir} cannot be restored here: ${why}`,
    { fields: { dir } },
  );
}

function invalid(dir: string, why: string): AenvError {
  return new AenvError('VMM_SNAPSHOT_INVALID', `snapshot ${dir}: ${why}`, { fields: { dir } });
}

const driveList = (ds: readonly { id: string; readOnly: boolean }[]): string =>
  ds.map((d) => `${d.id}${d.readOnly ? ':ro' : ''}`).join(',');

function checkDevices(m: SnapshotManifest, dir: string, spec: RestoreSpec): void {
  const want = driveList(m.drives);
  const got = driveList(spec.drives);
  if (want !== got) throw incompatible(dir, `it needs drives [${want}], the spec gives [${got}]`);
  if ((m.network === null) !== (spec.network === undefined)) {
    throw incompatible(
      dir,
      m.network === null ? 'it has no network device' : 'it needs a network device',
    );
  }
  const mac = spec.network?.mac.toLowerCase();
  if (m.network !== null && mac !== undefined && m.network.mac.toLowerCase() !== mac) {
    throw incompatible(dir, `its MAC is ${m.network.mac}, the spec gives ${spec.network?.mac}`);
  }
}

/**
 * Pure part: driver, mode, version, drive-path scheme, drives and network.
 * @throws {AenvError} `VMM_SNAPSHOT_INCOMPATIBLE`.
 */
export function checkFcCompatible(
  m: SnapshotManifest,
  dir: string,
  spec: RestoreSpec,
  host: FcRestoreHost,
): void {
  if (m.driver !== 'firecracker') {
    throw incompatible(dir, `it was taken by the ${m.driver} driver, this is firecracker`);
  }
  if (m.mode !== 'kvm')
    throw incompatible(dir, `it was taken under ${m.mode}, firecracker runs kvm`);
  if (m.vmmVersion !== host.vmmVersion) {
    throw incompatible(dir, `it was taken with ${m.vmmVersion}, this host has ${host.vmmVersion}`);
  }
  if (m.vmm.drivePaths !== host.drivePaths) {
    const how = (p: unknown): string => (p === 'jail' ? 'under the jailer' : 'without the jailer');
    throw incompatible(
      dir,
      `it was taken ${how(m.vmm.drivePaths)} and this driver runs ${how(host.drivePaths)} (drive paths differ)`,
    );
  }
  checkDevices(m, dir, spec);
}

async function fileSize(path: string): Promise<number | undefined> {
  return stat(path).then(
    (s) => s.size,
    () => undefined,
  );
}

/**
 * All checks: {@link checkFcCompatible}, then the files the restore reads.
 * @throws {AenvError} `VMM_SNAPSHOT_INCOMPATIBLE`, `VMM_SNAPSHOT_INVALID`.
 */
export async function checkFcRestorable(
  m: SnapshotManifest,
  dir: string,
  spec: RestoreSpec,
  host: FcRestoreHost,
): Promise<void> {
  checkFcCompatible(m, dir, spec, host);
  const stateSize = await fileSize(join(dir, m.state.file));
  if (stateSize !== m.state.bytes) {
    throw invalid(
      dir,
      `state file ${m.state.file} is ${stateSize ?? 'missing'}, expected ${m.state.bytes} bytes`,
    );
  }
  if (m.memory.file === null) throw invalid(dir, 'a firecracker snapshot needs a memory file');
  const memSize = await fileSize(join(dir, m.memory.file));
  if (memSize === undefined || memSize < m.memory.bytes) {
    throw invalid(
      dir,
      `memory file ${m.memory.file} is ${memSize ?? 'missing'}, expected ${m.memory.bytes} bytes`,
    );
  }
}
