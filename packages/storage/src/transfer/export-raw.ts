/**
 * Exporting a device (an image stack, typically) to a raw file: every byte
 * read through the device, all-zero blocks left as holes, so the file is
 * sparse where the disk is empty. `e2fsck` or `qemu-img compare` can check
 * the result.
 *
 * @module
 */
import { ftruncate } from 'node:fs';
import { promisify } from 'node:util';
import type { ReadableDevice } from '../device.js';
import { closeFd, openFd, writeFull } from '../file-io.js';

const truncateFd = promisify(ftruncate);
const PIECE_BYTES = 4 << 20;

/** What an export wrote. */
export interface ExportResult {
  /** Size of the file (the device size). */
  readonly bytes: number;
  /** Bytes actually written (non-zero blocks). */
  readonly dataBytes: number;
}

/** Writes the contents of `device` to a new raw file at `path`. */
export async function exportRawImage(device: ReadableDevice, path: string): Promise<ExportResult> {
  const fd = await openFd(path, 'w');
  const bs = device.blockSize;
  const zero = Buffer.alloc(bs);
  const piece = Buffer.alloc(PIECE_BYTES);
  let dataBytes = 0;
  try {
    await truncateFd(fd, device.size);
    for (let at = 0; at < device.size; at += PIECE_BYTES) {
      const n = Math.min(PIECE_BYTES, device.size - at);
      await device.readAt(piece.subarray(0, n), at);
      for (let o = 0; o < n; o += bs) {
        const block = piece.subarray(o, Math.min(o + bs, n));
        if (zero.subarray(0, block.length).equals(block)) continue;
        await writeFull(fd, block, at + o);
        dataBytes += block.length;
      }
    }
  } finally {
    await closeFd(fd);
  }
  return { bytes: device.size, dataBytes };
}
