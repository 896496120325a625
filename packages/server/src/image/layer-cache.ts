/**
 * The conversion cache, kept in the blob store beside the layers it names,
 * so every node sharing a store (S3) shares conversions:
 *
 * - `images/chains/<key>`: one converted layer. The key is a sha256 over
 *   the filesystem recipe, the disk size, the parent's key and the OCI
 *   layer's `diff_id` (its uncompressed digest), like OCI's ChainID: images
 *   sharing base layers share these records and their layers, whatever the
 *   compression their registry served.
 * - `images/manifests/<key>`: one converted image (key over recipe, size and
 *   manifest digest): its stack and config, so a second pull of the same
 *   image reads nothing but the manifest.
 *
 * Records are JSON, version 1. A record whose layer is gone (collected, or
 * a store switched) counts as absent and is rebuilt.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { AenvError } from '@aenv/shared';
import { layerKey, type BlobStore, type ImageSpec } from '@aenv/storage';
import type { ImageConfig } from './oci-manifest.js';

/** One converted layer. */
export interface ChainRecord {
  readonly version: 1;
  /** The storage layer's digest. */
  readonly layer: string;
  readonly virtualSize: number;
  /** The OCI layer's uncompressed digest; null for the empty filesystem at the bottom. */
  readonly diffId: string | null;
  readonly parent: string | null;
  readonly createdAt: string;
}

/** One converted image. */
export interface ImageRecord {
  readonly version: 1;
  /** The reference it was first pulled by. */
  readonly reference: string;
  readonly manifestDigest: string;
  readonly image: Required<ImageSpec>;
  readonly config: ImageConfig;
  readonly createdAt: string;
}

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Reads and writes conversion records in a blob store. */
export class LayerCache {
  readonly #store: BlobStore;
  readonly #recipe: string;

  constructor(store: BlobStore, recipe: string) {
    this.#store = store;
    this.#recipe = recipe;
  }

  /** The key of the layer that applies `diffId` on `parent` (undefined: the empty filesystem). */
  chainKey(virtualSize: number, parent: string | undefined, diffId: string | undefined): string {
    return sha(`${this.#recipe}|${virtualSize}|${parent ?? 'mkfs'}|${diffId ?? ''}`);
  }

  /** The key of a converted image. */
  imageKey(virtualSize: number, manifestDigest: string): string {
    return sha(`${this.#recipe}|${virtualSize}|${manifestDigest}`);
  }

  /** A chain record whose layer exists, or undefined. */
  async chain(key: string): Promise<ChainRecord | undefined> {
    const r = await this.#read<ChainRecord>(`images/chains/${key}`);
    if (r === undefined || r.version !== 1 || typeof r.layer !== 'string') return undefined;
    return (await this.#store.head(layerKey(r.layer))) === undefined ? undefined : r;
  }

  /** Records a converted layer. */
  async putChain(key: string, record: ChainRecord): Promise<void> {
    await this.#write(`images/chains/${key}`, record);
  }

  /** An image record whose layers all exist, or undefined. */
  async image(key: string): Promise<ImageRecord | undefined> {
    const r = await this.#read<ImageRecord>(`images/manifests/${key}`);
    if (r === undefined || r.version !== 1 || !Array.isArray(r.image?.layers)) return undefined;
    const layers: readonly string[] = r.image.layers;
    const heads = await Promise.all(layers.map((d) => this.#store.head(layerKey(d))));
    return heads.every((h) => h !== undefined) ? r : undefined;
  }

  /** Records a converted image. */
  async putImage(key: string, record: ImageRecord): Promise<void> {
    await this.#write(`images/manifests/${key}`, record);
  }

  /** Every image record (unchecked), for the layer collector's references. */
  async *images(): AsyncGenerator<ImageRecord> {
    for await (const info of this.#store.list('images/manifests/')) {
      const r = await this.#read<ImageRecord>(info.key);
      if (r !== undefined && Array.isArray(r.image?.layers)) yield r;
    }
  }

  async #read<T>(key: string): Promise<T | undefined> {
    try {
      const stream = await this.#store.get(key);
      const parts: Buffer[] = [];
      for await (const c of stream) parts.push(c as Buffer);
      return JSON.parse(Buffer.concat(parts).toString('utf8')) as T;
    } catch (err) {
      if (err instanceof AenvError && err.code === 'BLOB_NOT_FOUND') return undefined;
      if (err instanceof SyntaxError) return undefined;
      throw err;
    }
  }

  async #write(key: string, record: unknown): Promise<void> {
    await this.#store.put(key, Buffer.from(JSON.stringify(record)));
  }
}
