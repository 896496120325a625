/**
 * Sealing: turning an upper into a layer blob and a stack into a longer one.
 *
 * `buildLayerFromUpper` walks the upper's runs in block order and feeds
 * them to a `LayerWriter`: data runs with their bytes, zero runs as zero
 * extents (they must keep hiding the layers below). Cost is proportional to
 * what the upper holds, never to the disk size. `sealUpper` then puts the
 * blob into the store (warming a remote store's cache with its chunks),
 * opens it as a layer and creates the fresh upper for the longer stack.
 *
 * The upper directory is replaced by creating `<dir>.next`, deleting
 * `<dir>` and renaming; `finishInterruptedSeal` completes a replacement a
 * crash cut short.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { LOG_FIELDS } from '@aenv/shared';
import type { BlobStore } from '../blob/blob-store.js';
import type { ChunkCache } from '../cache/chunk-cache.js';
import { layerKey } from '../digest.js';
import { publish, STORAGE_CHANNELS } from '../events.js';
import { LayerReader } from '../layer/layer-reader.js';
import { LayerWriter, type BuiltLayer, type LayerWriterOptions } from '../layer/layer-writer.js';
import { ZERO } from '../upper/block-table.js';
import { Upper, deleteUpper } from '../upper/upper.js';
import type { SealOptions, SealResult } from './image-device.js';
import { stackHash, type ImageSpec } from './image-spec.js';

const PIECE_BYTES = 4 << 20;

/** Writes the contents of `upper` as a layer blob at `path`. */
export async function buildLayerFromUpper(
  upper: Upper,
  path: string,
  options: LayerWriterOptions,
): Promise<BuiltLayer> {
  const writer = await LayerWriter.create(path, options);
  const bs = upper.blockSize;
  const piece = Buffer.allocUnsafe(PIECE_BYTES);
  try {
    for (const run of upper.runs()) {
      if (run.value === ZERO) {
        writer.addZero(run.block, run.count);
        continue;
      }
      for (let done = 0; done < run.count;) {
        const n = Math.min(run.count - done, PIECE_BYTES / bs);
        const buf = piece.subarray(0, n * bs);
        await upper.readData(buf, run.value + done * bs);
        await writer.addData(run.block + done, buf);
        done += n;
      }
    }
    return await writer.finish();
  } catch (err) {
    await writer.abort();
    throw err;
  }
}

/** What sealing starts from. */
export interface SealInput {
  /** The upper to seal; flushed, then closed on success. */
  readonly upper: Upper;
  readonly upperDir: string;
  readonly image: Required<ImageSpec>;
  readonly store: BlobStore;
  readonly cache: ChunkCache | undefined;
}

/** What sealing produced: the new top layer and the fresh upper above it. */
export interface Sealed {
  readonly result: SealResult;
  readonly layer: LayerReader;
  readonly upper: Upper;
  readonly upperDir: string;
}

/** Seals `input.upper` (see the module comment). The caller excludes all I/O meanwhile. */
export async function sealUpper(input: SealInput, options: SealOptions): Promise<Sealed> {
  const started = performance.now();
  const { upper, upperDir, image, store } = input;
  await upper.flush();
  const cache = store.localPath === undefined ? input.cache : undefined;
  const built = await buildLayerFromUpper(upper, `${upperDir}.layer`, {
    virtualSize: image.virtualSize,
    blockSize: image.blockSize,
    compression: options.compression ?? 'none',
    ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
    ...(cache === undefined ? {} : { onChunk: (key, plain) => cache.insert(key, plain) }),
  });
  try {
    const existing = await store.head(layerKey(built.digest));
    if (existing?.size !== built.size)
      await store.put(layerKey(built.digest), { path: built.path });
  } finally {
    await rm(built.path, { force: true });
  }
  const sealedImage = { ...image, layers: [...image.layers, built.digest] };
  const layer = await LayerReader.open(built.digest, { store, cache: input.cache });
  const nextDir = options.nextUpperDir ?? upperDir;
  const fresh = await replaceUpper(upper, sealedImage, upperDir, nextDir).catch(
    async (err: unknown) => {
      await layer.close();
      throw err;
    },
  );
  const durationMs = performance.now() - started;
  publish(STORAGE_CHANNELS.seal, {
    [LOG_FIELDS.layerDigest]: built.digest,
    [LOG_FIELDS.bytes]: built.size,
    [LOG_FIELDS.durationMs]: durationMs,
  });
  return {
    result: { digest: built.digest, image: sealedImage, blobBytes: built.size, durationMs },
    layer,
    upper: fresh,
    upperDir: nextDir,
  };
}

/** Creates the upper for the sealed stack and retires the old one. */
async function replaceUpper(
  old: Upper,
  image: Required<ImageSpec>,
  oldDir: string,
  nextDir: string,
): Promise<Upper> {
  const header = {
    blockSize: image.blockSize,
    virtualSize: image.virtualSize,
    stackHash: stackHash(image),
  };
  const createDir = nextDir === oldDir ? `${oldDir}.next` : nextDir;
  await deleteUpper(`${oldDir}.next`);
  const fresh = await Upper.open({ dir: createDir, mode: 'create', header });
  await old.close();
  await deleteUpper(oldDir);
  if (createDir !== nextDir) await rename(createDir, nextDir);
  return fresh;
}

/** Completes an upper replacement a crash interrupted (only `<dir>.next` is left). */
export async function finishInterruptedSeal(dir: string): Promise<void> {
  if (!existsSync(dir) && existsSync(`${dir}.next`)) await rename(`${dir}.next`, dir);
}
