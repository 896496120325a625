/**
 * A per-sandbox copy-on-write overlay of a read-only base image: a qcow2
 * file backed by the raw base. Creating one costs a few hundred KiB and
 * never copies the base. (Deliberately simple: the storage engine's
 * layered images replace it.)
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';

const run = promisify(execFile);

/**
 * Creates `path` as a qcow2 overlay over the raw image `base`.
 * @throws {AenvError} `SBX_DISK_FAILED`.
 */
export async function createQcow2Overlay(base: string, path: string): Promise<void> {
  try {
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', base, '-F', 'raw', path]);
  } catch (err) {
    throw new AenvError('SBX_DISK_FAILED', `cannot create the sandbox disk overlay over ${base}`, {
      cause: err,
      fields: { path },
    });
  }
}
