/**
 * Whether a snapshot may be restored here, with this spec: the checks that
 * turn "QEMU failed to load the migration stream" into a clear error before
 * anything is started. Snapshots record the driver, virtualization mode and
 * VMM version they came from and refuse to restore elsewhere.
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { RestoreSpec, VirtualizationMode } from '../driver.js';
import type { SnapshotManifest } from '../snapshot-manifest.js';

/** What this driver instance is. */
export interface RestoreHost {
  readonly mode: VirtualizationMode;
  readonly vmmVersion: string;
}

async function fileSize(path: string): Promise<number | undefined> {
  return stat(path).then(
    (s) => s.size,
    () => undefined,
  );
}

function incompatible(dir: string, why: string): AenvError {
  return new AenvError(
    'VMM_SNAPSHOT_INCOMPATIBLE',
    `snapshot ${dir} cannot be restored here: ${why}`,
    {
      fields: { dir },
    },
  );
}

function invalid(dir: string, why: string): AenvError {
  return new AenvError('VMM_SNAPSHOT_INVALID', `snapshot ${dir}: ${why}`, { fields: { dir } });
}

/** Pure part: driver, mode, version, drives and network against the spec. */
export function checkCompatible(
  m: SnapshotManifest,
  dir: string,
  spec: RestoreSpec,
  host: RestoreHost,
): void {
  if (m.driver !== 'qemu')
    throw incompatible(dir, `it was taken by the ${m.driver} driver, this is qemu`);
  if (m.mode !== host.mode) {
    throw incompatible(dir, `it was taken under ${m.mode}, this driver runs ${host.mode}`);
  }
  if (m.vmmVersion !== host.vmmVersion) {
    throw incompatible(dir, `it was taken with ${m.vmmVersion}, this host has ${host.vmmVersion}`);
  }
  const want = m.drives.map((d) => `${d.id}${d.readOnly ? ':ro' : ''}`).join(',');
  const got = spec.drives.map((d) => `${d.id}${d.readOnly ? ':ro' : ''}`).join(',');
  if (want !== got) throw incompatible(dir, `it needs drives [${want}], the spec gives [${got}]`);
  if ((m.network === null) !== (spec.network === undefined)) {
    throw incompatible(
      dir,
      m.network === null ? 'it has no network device' : 'it needs a network device',
    );
  }
  if (
    m.network !== null &&
    spec.network !== undefined &&
    m.network.mac.toLowerCase() !== spec.network.mac.toLowerCase()
  ) {
    throw incompatible(dir, `its MAC is ${m.network.mac}, the spec gives ${spec.network.mac}`);
  }
}

/**
 * All checks: {@link checkCompatible}, then the files the restore reads.
 * @throws {AenvError} `VMM_SNAPSHOT_INCOMPATIBLE`, `VMM_SNAPSHOT_INVALID`.
 */
export async function checkRestorable(
  m: SnapshotManifest,
  dir: string,
  spec: RestoreSpec,
  host: RestoreHost,
): Promise<void> {
  checkCompatible(m, dir, spec, host);
  const stateSize = await fileSize(join(dir, m.state.file));
  if (stateSize !== m.state.bytes) {
    throw invalid(
      dir,
      `state file ${m.state.file} is ${stateSize ?? 'missing'}, expected ${m.state.bytes} bytes`,
    );
  }
  if (m.memory.file !== null) {
    const memSize = await fileSize(join(dir, m.memory.file));
    if (memSize === undefined || memSize < m.memory.bytes) {
      throw invalid(
        dir,
        `memory file ${m.memory.file} is ${memSize ?? 'missing'}, expected ${m.memory.bytes} bytes`,
      );
    }
  }
  for (const file of [m.boot.kernel, m.boot.initrd]) {
    if (file !== null && (await fileSize(file)) === undefined) {
      throw invalid(dir, `boot file ${file} it was booted with is gone`);
    }
  }
}
