/**
 * `DiskGrower`: gives an image a bigger disk (a cold start's `diskSizeMB`)
 * by growing its filesystem offline on the host (`resize2fs` on the raw
 * file) and sealing what that changed as one more layer, cached like a
 * conversion layer under a key over the stack and the new size.
 *
 * @module
 */
import { mkdir, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Cleanup, newId } from '@aenv/shared';
import type { BlobStore, ImageSpec } from '@aenv/storage';
import { BlockDiffer } from './block-differ.js';
import type { LayerCache } from './layer-cache.js';
import { materializeStack, sealChanges } from './stack-file.js';

/** Options of {@link DiskGrower}. */
export interface DiskGrowerOptions {
  readonly store: BlobStore;
  readonly cache: LayerCache;
  readonly workRoot: string;
  readonly onLayerStored?: (digest: string) => void;
}

/** Grows a raw file's filesystem to a size (`growFilesystem` in production). */
export type GrowFn = (raw: string, sizeBytes: number) => Promise<void>;

/** Grows image disks, one at a time. */
export class DiskGrower {
  readonly #o: DiskGrowerOptions;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: DiskGrowerOptions) {
    this.#o = options;
  }

  /** `image` on a disk of `sizeBytes` (bigger than its own). */
  grow(
    image: Required<ImageSpec>,
    sizeBytes: number,
    growFs: GrowFn,
  ): Promise<Required<ImageSpec>> {
    const next = this.#queue.then(() => this.#grow(image, sizeBytes, growFs));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #grow(
    image: Required<ImageSpec>,
    sizeBytes: number,
    growFs: GrowFn,
  ): Promise<Required<ImageSpec>> {
    const stack = createHash('sha256').update(JSON.stringify(image)).digest('hex');
    const key = this.#o.cache.chainKey(sizeBytes, stack, 'grow');
    const known = await this.#o.cache.chain(key);
    const grown = (layer: string): Required<ImageSpec> => ({
      ...image,
      virtualSize: sizeBytes,
      layers: [...image.layers, layer],
    });
    if (known !== undefined) return grown(known.layer);
    await using cleanup = new Cleanup();
    const dir = join(this.#o.workRoot, newId());
    await mkdir(dir, { recursive: true });
    cleanup.add('remove grow directory', () => rm(dir, { recursive: true, force: true }));
    const raw = join(dir, 'disk.raw');
    await materializeStack(this.#o.store, image, raw);
    const differ = new BlockDiffer(raw, sizeBytes, image.blockSize);
    await differ.baseline();
    await growFs(raw, sizeBytes);
    const layer = await sealChanges(differ, {
      store: this.#o.store,
      dir,
      virtualSize: sizeBytes,
      blockSize: image.blockSize,
      onLayerStored: this.#o.onLayerStored,
    });
    await this.#o.cache.putChain(key, {
      version: 1,
      layer,
      virtualSize: sizeBytes,
      diffId: null,
      parent: stack,
      createdAt: new Date().toISOString(),
    });
    return grown(layer);
  }
}
