/**
 * Moving between layer stacks and raw files during conversion: writing a
 * stack's contents into a sparse raw file (to continue a cached chain),
 * and sealing what changed in the raw file into a new layer in the store.
 *
 * @module
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ImageDevice,
  LayerWriter,
  exportRawImage,
  layerKey,
  type BlobStore,
  type ImageSpec,
} from '@aenv/storage';
import type { BlockDiffer } from './block-differ.js';

/** Writes the contents of `image` into a new sparse raw file. */
export async function materializeStack(
  store: BlobStore,
  image: ImageSpec,
  raw: string,
): Promise<void> {
  const device = await ImageDevice.open({ image, store });
  try {
    await exportRawImage(device, raw);
  } finally {
    await device.close();
  }
}

/** Where and how {@link sealChanges} builds its layer. */
export interface SealTarget {
  readonly store: BlobStore;
  /** Scratch directory for the layer file. */
  readonly dir: string;
  readonly virtualSize: number;
  readonly blockSize: number;
  /** Called with the digest before the layer is stored (so the collector spares it). */
  readonly onLayerStored?: ((digest: string) => void) | undefined;
}

/** Seals what changed since the differ's last look into a layer in the store; returns its digest. */
export async function sealChanges(differ: BlockDiffer, t: SealTarget): Promise<string> {
  const out = join(t.dir, 'layer.tmp');
  const writer = await LayerWriter.create(out, {
    virtualSize: t.virtualSize,
    blockSize: t.blockSize,
  });
  try {
    await differ.diffInto(writer);
  } catch (err) {
    await writer.abort();
    throw err;
  }
  const layer = await writer.finish();
  try {
    t.onLayerStored?.(layer.digest);
    await t.store.put(layerKey(layer.digest), { path: layer.path });
  } finally {
    await rm(out, { force: true });
  }
  return layer.digest;
}
