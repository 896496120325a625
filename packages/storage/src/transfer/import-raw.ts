/**
 * Importing a raw disk image (an ext4 filesystem image, say) as a base
 * layer: one sequential pass, all-zero blocks left out (they read as zeros
 * at the bottom of any stack), the blob put into the store.
 *
 * @module
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../blob/blob-store.js';
import { layerKey } from '../digest.js';
import { closeFd, openFd, readFull, statFd } from '../file-io.js';
import { DEFAULT_BLOCK_SIZE, type ImageSpec } from '../image/image-spec.js';
import { LayerWriter, type LayerCompression } from '../layer/layer-writer.js';

const PIECE_BYTES = 4 << 20;

/** Options of {@link importRawImage}. */
export interface ImportRawOptions {
  readonly store: BlobStore;
  /** Scratch directory for the layer file. @default the OS temp dir */
  readonly workDir?: string;
  /** @default 'none' */
  readonly compression?: LayerCompression;
  /** @default 1 MiB */
  readonly chunkSize?: number;
  /** @default 4096 */
  readonly blockSize?: number;
}

/** What an import produced. */
export interface ImportResult {
  readonly digest: string;
  /** A one-layer image of the file's size. */
  readonly image: Required<ImageSpec>;
  readonly blobBytes: number;
  /** Bytes of non-zero blocks stored. */
  readonly dataBytes: number;
  /** Bytes of all-zero blocks skipped. */
  readonly skippedBytes: number;
}

/** Imports the raw image at `path` as a base layer into `options.store`. */
export async function importRawImage(
  path: string,
  options: ImportRawOptions,
): Promise<ImportResult> {
  const bs = options.blockSize ?? DEFAULT_BLOCK_SIZE;
  const fd = await openFd(path, 'r');
  const out = join(options.workDir ?? tmpdir(), `aenv-import-${randomUUID()}.layer`);
  try {
    const size = (await statFd(fd)).size;
    const writer = await LayerWriter.create(out, {
      virtualSize: size,
      blockSize: bs,
      compression: options.compression ?? 'none',
      ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
    });
    let dataBytes = 0;
    try {
      dataBytes = await copyNonZero(fd, size, bs, writer);
    } catch (err) {
      await writer.abort();
      throw err;
    }
    const built = await writer.finish();
    await options.store.put(layerKey(built.digest), { path: built.path });
    return {
      digest: built.digest,
      image: { virtualSize: size, blockSize: bs, layers: [built.digest] },
      blobBytes: built.size,
      dataBytes,
      skippedBytes: Math.ceil(size / bs) * bs - dataBytes,
    };
  } finally {
    await closeFd(fd);
    await rm(out, { force: true });
  }
}

async function copyNonZero(fd: number, size: number, bs: number, writer: LayerWriter) {
  const piece = Buffer.alloc(PIECE_BYTES);
  const zero = Buffer.alloc(bs);
  let dataBytes = 0;
  for (let at = 0; at < size; at += PIECE_BYTES) {
    const n = Math.min(PIECE_BYTES, size - at);
    const blocks = Math.ceil(n / bs);
    piece.fill(0, n, blocks * bs);
    await readFull(fd, piece.subarray(0, n), at);
    let runStart = -1;
    for (let b = 0; b <= blocks; b++) {
      const isData = b < blocks && !zero.equals(piece.subarray(b * bs, (b + 1) * bs));
      if (isData && runStart < 0) runStart = b;
      if (!isData && runStart >= 0) {
        await writer.addData(at / bs + runStart, piece.subarray(runStart * bs, b * bs));
        dataBytes += (b - runStart) * bs;
        runStart = -1;
      }
    }
  }
  return dataBytes;
}
