/**
 * `ImageConverter`: turns an image's OCI layers into storage-engine layers,
 * one per OCI layer over one for the empty filesystem, reusing every layer
 * the cache already has (`layer-cache.ts`).
 *
 * For the layers the cache lacks: their blobs are downloaded in parallel
 * while conversion goes layer by layer: the filesystem of the cached prefix
 * is materialised into a sparse raw file (or made, for a new chain), then
 * for each layer the file is loop-mounted, the layer applied (its
 * uncompressed digest checked against the config's `diff_id`), unmounted,
 * and the changed blocks sealed into a layer (`block-differ.ts`), stored,
 * and recorded. One conversion runs at a time per node (they compete for
 * the same disk and CPU); downloads of the next ones may already run.
 *
 * Everything a conversion creates on the host lives in its own directory
 * under the work root and is removed when it ends, failed or not; layers
 * it completed stay in the cache (they are correct), the one it was
 * building does not.
 *
 * @module
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError, Cleanup, newId } from '@aenv/shared';
import type { BlobStore, ImageSpec } from '@aenv/storage';
import { BlockDiffer } from './block-differ.js';
import { makeFilesystem, mountVolume } from './ext4-volume.js';
import type { PullProgress } from './image-progress.js';
import { applyLayer } from './layer-applier.js';
import type { LayerCache } from './layer-cache.js';
import { openLayerStream } from './layer-stream.js';
import type { LayerDescriptor } from './oci-manifest.js';
import { materializeStack, sealChanges } from './stack-file.js';
import { readTar } from './tar-reader.js';

const BLOCK_SIZE = 4096;

/** Options of {@link ImageConverter}. */
export interface ImageConverterOptions {
  readonly store: BlobStore;
  readonly cache: LayerCache;
  /** Where conversions keep their raw files, mounts and downloads. */
  readonly workRoot: string;
  readonly downloadConcurrency: number;
  /** Called with each layer stored (before its records; the collector must spare it). */
  readonly onLayerStored?: (digest: string) => void;
}

/** What to convert. */
export interface ConvertJob {
  readonly layers: readonly LayerDescriptor[];
  /** The config's `diff_ids`, one per layer. */
  readonly diffIds: readonly string[];
  /** Disk size of the result (the filesystem's size). */
  readonly virtualSize: number;
  /** Downloads one layer blob into `file`, verified. */
  readonly download: (
    layer: LayerDescriptor,
    file: string,
    onBytes: (n: number) => void,
    signal: AbortSignal,
  ) => Promise<void>;
  readonly onProgress?: (e: PullProgress) => void;
}

/** What a conversion did. */
export interface ConvertResult {
  readonly image: Required<ImageSpec>;
  /** OCI layers downloaded. */
  readonly downloaded: number;
  /** Storage layers built (the empty filesystem included). */
  readonly converted: number;
  /** OCI layers found converted already. */
  readonly cached: number;
}

/** Converts images, one at a time. */
export class ImageConverter {
  readonly #o: ImageConverterOptions;
  #queue: Promise<void> = Promise.resolve();

  constructor(options: ImageConverterOptions) {
    this.#o = options;
  }

  /**
   * Converts (or finds converted) every layer of an image.
   * @throws {AenvError} download errors, `IMAGE_DIGEST_MISMATCH`, `IMAGE_INVALID`,
   *   `IMAGE_TOO_LARGE`, `IMAGE_CONVERT_FAILED`.
   */
  async convert(job: ConvertJob): Promise<ConvertResult> {
    const keys = this.#chainKeys(job);
    const first = await this.#cachedPrefix(keys);
    if (first.length === keys.length) {
      reportCached(job, first.length - 1);
      return this.#result(job, first, 0, 0, first.length - 1);
    }
    await using cleanup = new Cleanup();
    const dir = join(this.#o.workRoot, newId());
    await mkdir(join(dir, 'blobs'), { recursive: true });
    cleanup.add('remove conversion directory', () => rm(dir, { recursive: true, force: true }));
    const abort = new AbortController();
    cleanup.add('stop downloads', () =>
      abort.abort(new AenvError('IMAGE_CONVERT_FAILED', 'conversion ended')),
    );
    const downloads = this.#startDownloads(job, Math.max(0, first.length - 1), dir, abort.signal);
    const release = await this.#turn();
    cleanup.add('next conversion', release);
    // Another conversion may have built part of this chain while this one waited.
    const cached = await this.#cachedPrefix(keys);
    const cachedLayers = Math.max(0, cached.length - 1);
    reportCached(job, cachedLayers);
    if (cached.length === keys.length) return this.#result(job, cached, 0, 0, cachedLayers);
    const built = await this.#build(job, { keys, cached, dir, downloads });
    return this.#result(job, [...cached, ...built], downloads.count, built.length, cachedLayers);
  }

  #chainKeys(job: ConvertJob): string[] {
    const keys = [this.#o.cache.chainKey(job.virtualSize, undefined, undefined)];
    for (const d of job.diffIds)
      keys.push(this.#o.cache.chainKey(job.virtualSize, keys[keys.length - 1], d));
    return keys;
  }

  /** Layer digests of the longest cached prefix of the chain. */
  async #cachedPrefix(keys: readonly string[]): Promise<string[]> {
    const records = await Promise.all(keys.map((k) => this.#o.cache.chain(k)));
    const out: string[] = [];
    for (const r of records) {
      if (r === undefined) break;
      out.push(r.layer);
    }
    return out;
  }

  #result(
    job: ConvertJob,
    layers: string[],
    downloaded: number,
    converted: number,
    cached: number,
  ): ConvertResult {
    return {
      image: { virtualSize: job.virtualSize, blockSize: BLOCK_SIZE, layers },
      downloaded,
      converted,
      cached,
    };
  }

  #turn(): Promise<() => void> {
    let release = (): void => undefined;
    const mine = new Promise<void>((r) => (release = r));
    const ready = this.#queue.then(() => release);
    this.#queue = this.#queue.then(() => mine);
    return ready;
  }

  /** Starts downloading the OCI layers after the first `skip`, a few at a time. */
  #startDownloads(job: ConvertJob, skip: number, dir: string, signal: AbortSignal) {
    const files = new Map<number, Promise<string>>();
    let running = 0;
    const waiting: (() => void)[] = [];
    const slot = async (): Promise<void> => {
      while (running >= this.#o.downloadConcurrency)
        await new Promise<void>((r) => waiting.push(r));
      running++;
    };
    const state = { count: 0 };
    for (let i = skip; i < job.layers.length; i++) {
      const layer = job.layers[i] as LayerDescriptor;
      const file = join(dir, 'blobs', layer.digest.slice(7));
      const stage = layerStage(i, job.layers.length, layer.digest);
      const p = (async () => {
        await slot();
        try {
          signal.throwIfAborted();
          job.onProgress?.({
            stage,
            status: 'start',
            phase: 'download',
            bytes: 0,
            totalBytes: layer.size,
          });
          await job.download(
            layer,
            file,
            (n) =>
              job.onProgress?.({
                stage,
                status: 'progress',
                phase: 'download',
                bytes: n,
                totalBytes: layer.size,
              }),
            signal,
          );
          state.count++;
          return file;
        } finally {
          running--;
          waiting.shift()?.();
        }
      })();
      p.catch(() => undefined);
      files.set(i, p);
    }
    return {
      file: (i: number): Promise<string> =>
        files.get(i) ?? Promise.reject(new Error(`layer ${i} was not downloaded`)),
      get count(): number {
        return state.count;
      },
    };
  }

  async #build(
    job: ConvertJob,
    ctx: {
      keys: string[];
      cached: string[];
      dir: string;
      downloads: { file(i: number): Promise<string> };
    },
  ): Promise<string[]> {
    const { keys, cached, dir } = ctx;
    const raw = join(dir, 'disk.raw');
    const mnt = join(dir, 'mnt');
    const scratch = join(dir, 'scratch');
    await mkdir(mnt);
    await mkdir(scratch);
    const differ = new BlockDiffer(raw, job.virtualSize, BLOCK_SIZE);
    const built: string[] = [];
    if (cached.length === 0) {
      await makeFilesystem(raw, job.virtualSize);
      built.push(
        await this.#seal(differ, job, { dir, key: keys[0] as string, parent: null, diffId: null }),
      );
    } else {
      const prefix = { virtualSize: job.virtualSize, layers: cached, blockSize: BLOCK_SIZE };
      await materializeStack(this.#o.store, prefix, raw);
      await differ.baseline();
    }
    for (let k = cached.length + built.length; k < keys.length; k++) {
      const i = k - 1;
      const layer = job.layers[i] as LayerDescriptor;
      const stage = layerStage(i, job.layers.length, layer.digest);
      const file = await ctx.downloads.file(i);
      await this.#apply(file, raw, mnt, scratch, {
        diffId: job.diffIds[i] as string,
        onBytes: (n) =>
          job.onProgress?.({
            stage,
            status: 'progress',
            phase: 'convert',
            bytes: n,
            totalBytes: layer.size,
          }),
      });
      await rm(file, { force: true });
      built.push(
        await this.#seal(differ, job, {
          dir,
          key: keys[k] as string,
          parent: keys[k - 1] as string,
          diffId: job.diffIds[i] as string,
        }),
      );
      job.onProgress?.({
        stage,
        status: 'done',
        phase: 'convert',
        bytes: layer.size,
        totalBytes: layer.size,
      });
    }
    return built;
  }

  async #apply(
    file: string,
    raw: string,
    mnt: string,
    scratch: string,
    o: { diffId: string; onBytes: (n: number) => void },
  ): Promise<void> {
    const mounted = await mountVolume(raw, mnt);
    const stream = await openLayerStream(file, o.onBytes);
    try {
      await applyLayer(mnt, readTar(stream.chunks), scratch);
      await stream.drain();
    } catch (err) {
      stream.close();
      throw conversionError(err);
    } finally {
      await mounted.unmount();
    }
    if (stream.digest() !== o.diffId) {
      throw new AenvError(
        'IMAGE_DIGEST_MISMATCH',
        `layer ${file.slice(-12)}: uncompressed digest ${stream.digest()} is not the config's diff_id ${o.diffId}`,
      );
    }
  }

  async #seal(
    differ: BlockDiffer,
    job: ConvertJob,
    r: { dir: string; key: string; parent: string | null; diffId: string | null },
  ): Promise<string> {
    const layer = await sealChanges(differ, {
      store: this.#o.store,
      dir: r.dir,
      virtualSize: job.virtualSize,
      blockSize: BLOCK_SIZE,
      onLayerStored: this.#o.onLayerStored,
    });
    await this.#o.cache.putChain(r.key, {
      version: 1,
      layer,
      virtualSize: job.virtualSize,
      diffId: r.diffId,
      parent: r.parent,
      createdAt: new Date().toISOString(),
    });
    return layer;
  }
}

function reportCached(job: ConvertJob, count: number): void {
  for (let i = 0; i < count; i++) {
    const layer = job.layers[i] as LayerDescriptor;
    const stage = layerStage(i, job.layers.length, layer.digest);
    job.onProgress?.({ stage, status: 'done', phase: 'cached', message: 'already converted' });
  }
}

/** The progress stage of OCI layer `i` (0-based) of `n`. */
export function layerStage(i: number, n: number, digest: string): string {
  return `layer ${i + 1}/${n} ${digest.slice(7, 19)}`;
}

function conversionError(err: unknown): AenvError {
  if (err instanceof AenvError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOSPC') {
    return new AenvError(
      'IMAGE_TOO_LARGE',
      "the image's files do not fit the image disk size (image.diskSizeMiB)",
      {
        cause: err,
      },
    );
  }
  return new AenvError('IMAGE_CONVERT_FAILED', `applying a layer failed: ${e.message}`, {
    cause: err,
  });
}
