/**
 * The backing chain of a qcow2 image, read from the image headers: a jailed
 * QEMU opens every backing file by its path, so each must be visible in its
 * mount namespace.
 *
 * Header (qcow2 spec, all fields big-endian): magic `QFI\xfb` at 0,
 * `backing_file_offset` (u64) at 8, `backing_file_size` (u32) at 16; a
 * relative backing path is relative to the image's directory.
 *
 * @module
 */
import { open } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { AenvError } from '@aenv/shared';

const QCOW2_MAGIC = 0x514649fb;
/** Longest chain followed (QEMU's own limit is far larger; ours are one or two deep). */
const MAX_DEPTH = 16;
const MAX_NAME = 4096;

async function backingOf(path: string): Promise<string | undefined> {
  const fh = await open(path, 'r');
  try {
    const header = Buffer.alloc(20);
    const { bytesRead } = await fh.read(header, 0, 20, 0);
    if (bytesRead < 20 || header.readUInt32BE(0) !== QCOW2_MAGIC) return undefined;
    const offset = header.readBigUInt64BE(8);
    const size = header.readUInt32BE(16);
    if (offset === 0n || size === 0) return undefined;
    if (size > MAX_NAME) throw new Error(`backing file name of ${size} bytes`);
    const name = Buffer.alloc(size);
    await fh.read(name, 0, size, Number(offset));
    const file = name.toString('utf8');
    return isAbsolute(file) ? file : resolve(dirname(path), file);
  } finally {
    await fh.close();
  }
}

/**
 * The backing files of the qcow2 image at `path`, nearest first (empty for
 * a raw image or a qcow2 without backing file).
 * @throws {AenvError} `VMM_JAIL_FAILED` for an unreadable image or a chain that does not end.
 */
export async function qcow2BackingChain(path: string): Promise<string[]> {
  const chain: string[] = [];
  let current = path;
  try {
    for (;;) {
      const next = await backingOf(current);
      if (next === undefined) return chain;
      if (chain.length >= MAX_DEPTH || chain.includes(next))
        throw new Error('backing chain does not end');
      chain.push(next);
      current = next;
    }
  } catch (err) {
    throw new AenvError(
      'VMM_JAIL_FAILED',
      `cannot read the backing chain of ${path}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}
