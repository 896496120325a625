/**
 * Writable rootfs drives for VM suites, in a directory of the test's own:
 * a fresh one over the base image for a boot, and one over the disk of a
 * VM that has stopped (as of its snapshot) for each restore. A node does
 * this with the storage engine (a fresh upper over sealed layers); a suite
 * needs only the same semantics, so it uses what each driver attaches:
 *
 * - {@link qcow2Disks}: qcow2 overlays (`qemu-img create -b`), instant and
 *   sharing the backing file: for drivers with `qcow2-drives`;
 * - {@link rawCopyDisks}: sparse (reflink where the filesystem can) copies
 *   of raw files: for every driver (Firecracker takes raw files only).
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DriveSpec } from '@aenv/vmm';

const exec = promisify(execFile);

/** Makes rootfs drives (id `rootfs`, writable). */
export interface SuiteDisks {
  /** A new disk over the base image, for a boot. */
  fresh(name: string): Promise<DriveSpec>;
  /**
   * A new disk over `from` as it is now. The VM that wrote `from` must have
   * stopped (ended into its snapshot), so `from` is the disk as of that
   * snapshot; `from` is not written any more.
   */
  fork(from: DriveSpec, name: string): Promise<DriveSpec>;
}

function filePath(d: DriveSpec): string {
  if (d.source.kind !== 'file') throw new Error(`drive ${d.id} is not a file`);
  return d.source.path;
}

/** qcow2 overlays in `dir` over a raw `baseImage`. */
export function qcow2Disks(dir: string, baseImage: string, driveId = 'rootfs'): SuiteDisks {
  const overlay = async (name: string, backing: string, format: string): Promise<DriveSpec> => {
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${name}.qcow2`);
    await exec('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', backing, '-F', format, path]);
    return { id: driveId, source: { kind: 'file', path, format: 'qcow2' }, readOnly: false };
  };
  return {
    fresh: (name) => overlay(name, baseImage, 'raw'),
    fork: (from, name) => {
      const format = from.source.kind === 'file' ? from.source.format : 'raw';
      return overlay(name, filePath(from), format);
    },
  };
}

/** Sparse copies in `dir` of a raw `baseImage`. */
export function rawCopyDisks(dir: string, baseImage: string, driveId = 'rootfs'): SuiteDisks {
  const copy = async (from: string, name: string): Promise<DriveSpec> => {
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${name}.raw`);
    await exec('cp', ['--reflink=auto', '--sparse=always', from, path]);
    return { id: driveId, source: { kind: 'file', path, format: 'raw' }, readOnly: false };
  };
  return {
    fresh: (name) => copy(baseImage, name),
    fork: (from, name) => copy(filePath(from), name),
  };
}
