/**
 * Whether a snapshot may be restored here, with this spec: the checks that
 * turn "QEMU failed to load the migration stream" into a clear error before
 * anything is started. Snapshots record the driver, virtualization mode,
 * VMM version and boot files (with digests) they came from and refuse to
 * restore elsewhere: under another kernel than the driver is configured
 * with, or after their own kernel file changed.
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { RestoreSpec, VirtualizationMode } from '../driver.js';
import { fileDigest } from '../file-digest.js';
import type { SnapshotManifest } from '../snapshot-manifest.js';

/** A guest kernel (and initrd) the driver is configured with, with digests. */
export interface ConfiguredKernel {
  readonly kernel: string;
  readonly kernelDigest: string;
  /** Undefined: the configuration names no initrd of its own. */
  readonly initrd?: string | null;
  readonly initrdDigest?: string | null;
}

/** What this driver instance is. */
export interface RestoreHost {
  readonly mode: VirtualizationMode;
  readonly vmmVersion: string;
  /** The configured guest kernel, when the configuration overrides the snapshot's. */
  readonly guestKernel?: ConfiguredKernel;
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
  checkFormat(m, dir);
  if (host.guestKernel !== undefined) checkConfiguredKernel(m, dir, host.guestKernel);
}

/** What this driver needs of a manifest that older aenv versions did not write. */
function checkFormat(m: SnapshotManifest, dir: string): void {
  if (m.memory.file === null)
    throw incompatible(
      dir,
      'its RAM is inside the state stream, a format this driver no longer restores',
    );
  if (m.boot.kernelDigest === undefined || m.memory.baseId === undefined)
    throw incompatible(dir, 'it was written by an older aenv (no kernel digest or memory base id)');
}

function checkConfiguredKernel(m: SnapshotManifest, dir: string, k: ConfiguredKernel): void {
  if (m.boot.kernelDigest !== k.kernelDigest) {
    throw incompatible(
      dir,
      `it was taken with kernel ${m.boot.kernelDigest ?? '?'}, this driver is configured with ${k.kernel} (${k.kernelDigest})`,
    );
  }
  if (k.initrd !== undefined && (m.boot.initrdDigest ?? null) !== (k.initrdDigest ?? null)) {
    throw incompatible(
      dir,
      `it was taken with initrd ${m.boot.initrdDigest ?? 'none'}, this driver is configured with ${k.initrd ?? 'none'}`,
    );
  }
}

/** The boot files the restore starts QEMU with must still be the ones the snapshot recorded. */
async function checkBootFiles(m: SnapshotManifest, dir: string): Promise<void> {
  const files: [string | null, string | null | undefined][] = [
    [m.boot.kernel, m.boot.kernelDigest],
    [m.boot.initrd, m.boot.initrdDigest],
  ];
  for (const [file, digest] of files) {
    if (file === null) continue;
    const now = await fileDigest(file).catch(() => undefined);
    if (now === undefined) throw invalid(dir, `boot file ${file} it was booted with is gone`);
    if (digest !== undefined && digest !== null && now !== digest)
      throw incompatible(
        dir,
        `boot file ${file} changed since the snapshot (${now}, was ${digest})`,
      );
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
    if (memSize !== m.memory.bytes) {
      throw invalid(
        dir,
        `memory file ${m.memory.file} is ${memSize ?? 'missing'}, expected ${m.memory.bytes} bytes`,
      );
    }
  }
  const diff = m.memory.diff;
  if (diff !== undefined) {
    const diffSize = await fileSize(join(dir, diff.file));
    if (diffSize !== diff.bytes) {
      throw invalid(
        dir,
        `RAM diff ${diff.file} is ${diffSize ?? 'missing'}, expected ${diff.bytes} bytes`,
      );
    }
  }
  await checkBootFiles(m, dir);
}
