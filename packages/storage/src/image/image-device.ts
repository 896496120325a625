/**
 * `ImageDevice`: an image stack as one writable block device.
 *
 * Resolution order: the writable upper first, then the layers from the top
 * (last in `ImageSpec.layers`) to the base; bytes no level holds are zeros.
 * Writes, zeroes and trims go to the upper only; layers are never modified.
 *
 * Concurrency:
 * - `#io` (reader-writer gate): reads and writes hold it shared; `seal()`
 *   and `close()` hold it exclusively, so the stack never changes under an
 *   I/O in flight;
 * - `#writes`: writes hold it shared, `flush()` exclusively, so a flush
 *   sees no half-finished write (what makes the upper's journal sound);
 * - `#ranges`: writes to overlapping blocks run one at a time in arrival
 *   order, which makes read-modify-write of partial blocks atomic.
 * Reads are never serialized against writes: a read racing a write to the
 * same bytes sees old or new data, as on any disk.
 *
 * @module
 */
import { AenvError, Cleanup, LOG_FIELDS } from '@aenv/shared';
import type { BlobStore } from '../blob/blob-store.js';
import type { ChunkCache } from '../cache/chunk-cache.js';
import type { WritableDevice, WriteOptions } from '../device.js';
import { LayerReader } from '../layer/layer-reader.js';
import type { LayerCompression } from '../layer/layer-writer.js';
import { Upper, type UpperMode } from '../upper/upper.js';
import { normalizeImageSpec, stackHash, type ImageSpec } from './image-spec.js';
import { RangeLock } from './range-lock.js';
import { RwGate } from './rw-gate.js';
import { finishInterruptedSeal, sealUpper } from './seal-upper.js';
import type { StackLevel } from './stack-level.js';
import { readStack } from './stack-reader.js';

/** Options of {@link ImageDevice.open}. */
export interface OpenImageOptions {
  readonly image: ImageSpec;
  readonly store: BlobStore;
  /** Chunk cache for layers in a remote store. */
  readonly cache?: ChunkCache | undefined;
  /** The writable upper; without it the device is read-only. */
  readonly upper?: { readonly dir: string; readonly mode?: UpperMode } | undefined;
}

/** Options of {@link ImageDevice.seal}. */
export interface SealOptions {
  /** @default 'none' */
  readonly compression?: LayerCompression;
  /** Uncompressed bytes per chunk of the new layer. @default 1 MiB */
  readonly chunkSize?: number;
  /**
   * Directory of the fresh upper. The sealed upper's directory is deleted
   * either way (its contents now live in the layer).
   * @default the current upper's directory
   */
  readonly nextUpperDir?: string;
}

/** What a seal produced. */
export interface SealResult {
  /** Digest of the new layer. */
  readonly digest: string;
  /** The sealed stack: the old layers plus the new one. Children open this. */
  readonly image: Required<ImageSpec>;
  /** Size of the new layer blob. */
  readonly blobBytes: number;
  readonly durationMs: number;
}

/** Counters and shape of a device. */
export interface ImageDeviceStats {
  readonly virtualSize: number;
  readonly layers: number;
  readonly readOnly: boolean;
  readonly upperDataBytes: number;
  readonly upperMappedBlocks: number;
}

/** A byte range. */
export interface ByteRange {
  readonly offset: number;
  readonly length: number;
}

/** An image stack served as a block device. */
export class ImageDevice implements WritableDevice {
  readonly size: number;
  readonly blockSize: number;
  #spec: Required<ImageSpec>;
  readonly #layers: LayerReader[];
  #upper: Upper | undefined;
  #upperDir: string | undefined;
  readonly #store: BlobStore;
  readonly #cache: ChunkCache | undefined;
  readonly #io = new RwGate();
  readonly #writes = new RwGate();
  readonly #ranges = new RangeLock();
  #closed = false;
  #closing: Promise<void> | undefined;

  private constructor(parts: DeviceParts) {
    this.#spec = parts.spec;
    this.size = parts.spec.virtualSize;
    this.blockSize = parts.spec.blockSize;
    this.#layers = parts.layers;
    this.#upper = parts.upper;
    this.#upperDir = parts.upperDir;
    this.#store = parts.store;
    this.#cache = parts.cache;
  }

  /**
   * Opens the layers of `options.image` (header and index only) and the upper.
   * @throws {AenvError} `LAYER_NOT_FOUND`, `LAYER_CORRUPT`, `STORAGE_UPPER_*`,
   *   `INVALID_ARGUMENT` (bad spec, or a layer of another block size).
   */
  static async open(options: OpenImageOptions): Promise<ImageDevice> {
    const spec = normalizeImageSpec(options.image);
    const cleanup = new Cleanup();
    try {
      const source = { store: options.store, cache: options.cache };
      const opened = await Promise.allSettled(spec.layers.map((d) => LayerReader.open(d, source)));
      const layers: LayerReader[] = [];
      for (const r of opened) {
        if (r.status === 'fulfilled') {
          layers.push(r.value);
          cleanup.add('close layer', () => r.value.close());
        }
      }
      for (const r of opened) if (r.status === 'rejected') throw r.reason;
      for (const l of layers) checkBlockSize(l, spec.blockSize);
      let upper: Upper | undefined;
      if (options.upper !== undefined) {
        await finishInterruptedSeal(options.upper.dir);
        upper = await Upper.open({
          dir: options.upper.dir,
          mode: options.upper.mode ?? 'open-or-create',
          header: {
            blockSize: spec.blockSize,
            virtualSize: spec.virtualSize,
            stackHash: stackHash(spec),
          },
        });
      }
      cleanup.move();
      return new ImageDevice({
        spec,
        layers,
        upper,
        upperDir: options.upper?.dir,
        store: options.store,
        cache: options.cache,
      });
    } catch (err) {
      await cleanup.run().catch(() => undefined);
      throw err;
    }
  }

  /** The current stack (changes when the device is sealed). */
  get image(): Required<ImageSpec> {
    return this.#spec;
  }

  /** Whether the device has no upper. */
  get readOnly(): boolean {
    return this.#upper === undefined;
  }

  /** Counters and shape. */
  stats(): ImageDeviceStats {
    return {
      virtualSize: this.size,
      layers: this.#layers.length,
      readOnly: this.readOnly,
      upperDataBytes: this.#upper?.dataBytes ?? 0,
      upperMappedBlocks: this.#upper?.mappedBlocks ?? 0,
    };
  }

  async readAt(target: Uint8Array, offset: number): Promise<void> {
    this.#check(offset, target.length);
    await this.#io.shared(() => {
      this.#assertOpen();
      return readStack(this.#levels(), target, offset, this.blockSize);
    });
  }

  async writeAt(data: Uint8Array, offset: number, options?: WriteOptions): Promise<void> {
    this.#check(offset, data.length);
    await this.#mutate(offset, data.length, (upper) => this.#write(upper, data, offset));
    if (options?.fua === true) await this.flush();
  }

  async writeZeroesAt(offset: number, length: number, options?: WriteOptions): Promise<void> {
    this.#check(offset, length);
    await this.#mutate(offset, length, (upper) => this.#zero(upper, offset, length, false));
    if (options?.fua === true) await this.flush();
  }

  async trimAt(offset: number, length: number, options?: WriteOptions): Promise<void> {
    this.#check(offset, length);
    await this.#mutate(offset, length, (upper) => this.#zero(upper, offset, length, true));
    if (options?.fua === true) await this.flush();
  }

  async flush(): Promise<void> {
    this.#assertOpen();
    await this.#io.shared(() =>
      this.#writes.exclusive(async () => {
        this.#assertOpen();
        await this.#upper?.flush();
      }),
    );
  }

  /**
   * Fetches into the cache the layer chunks that hold `ranges` (a boot's
   * known working set, say), without reading them. Best effort: ranges the
   * upper holds, or that are zeros, need nothing.
   */
  async prefetch(ranges: readonly ByteRange[]): Promise<void> {
    await this.#io.shared(async () => {
      this.#assertOpen();
      const jobs: Promise<void>[] = [];
      for (const r of ranges) {
        this.#check(r.offset, r.length);
        if (r.length > 0) jobs.push(...this.#prefetchRange(r));
      }
      await Promise.all(jobs);
    });
  }

  /**
   * Seals the upper into a new immutable layer, puts it into the blob store
   * and continues on a fresh, empty upper above it. Time is proportional to
   * the data in the upper. Other devices may open `result.image` (with their
   * own uppers) to continue from the same state.
   * @throws {AenvError} `STORAGE_READ_ONLY` without an upper.
   */
  async seal(options: SealOptions = {}): Promise<SealResult> {
    this.#assertOpen();
    if (this.#upper === undefined || this.#upperDir === undefined) {
      throw new AenvError('STORAGE_READ_ONLY', 'cannot seal a device without an upper');
    }
    return this.#io.exclusive(() => this.#seal(options));
  }

  /** Flushes and closes the device; later calls throw `STORAGE_CLOSED`. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#io.exclusive(async () => {
      this.#closed = true;
      const cleanup = new Cleanup();
      for (const l of this.#layers) cleanup.add('close layer', () => l.close());
      const upper = this.#upper;
      if (upper !== undefined) {
        cleanup.add('close upper', () => upper.close());
        cleanup.add('flush upper', () => upper.flush());
      }
      await cleanup.run();
    });
    return this.#closing;
  }

  #levels(): StackLevel[] {
    const levels: StackLevel[] = [];
    if (this.#upper !== undefined) levels.push(this.#upper);
    for (let i = this.#layers.length - 1; i >= 0; i--) levels.push(this.#layers[i] as LayerReader);
    return levels;
  }

  async #mutate(
    offset: number,
    length: number,
    op: (upper: Upper) => Promise<void>,
  ): Promise<void> {
    if (this.#upper === undefined) {
      throw new AenvError('STORAGE_READ_ONLY', 'device was opened without an upper');
    }
    if (length === 0) return;
    const first = Math.floor(offset / this.blockSize);
    const end = Math.ceil((offset + length) / this.blockSize);
    await this.#io.shared(() =>
      this.#writes.shared(() =>
        this.#ranges.run(first, end, () => {
          this.#assertOpen();
          return op(this.#upper as Upper);
        }),
      ),
    );
  }

  async #write(upper: Upper, data: Uint8Array, offset: number): Promise<void> {
    const bs = this.blockSize;
    const first = Math.floor(offset / bs);
    const end = Math.ceil((offset + data.length) / bs);
    if (offset % bs === 0 && data.length % bs === 0) {
      await upper.writeBlocks(first, data);
      return;
    }
    const buf = Buffer.alloc((end - first) * bs);
    if (offset % bs !== 0) await this.#readBlock(buf.subarray(0, bs), first);
    if ((offset + data.length) % bs !== 0 && (end - 1 > first || offset % bs === 0)) {
      await this.#readBlock(buf.subarray(buf.length - bs), end - 1);
    }
    buf.set(data, offset - first * bs);
    await upper.writeBlocks(first, buf);
  }

  async #zero(upper: Upper, offset: number, length: number, trim: boolean): Promise<void> {
    const bs = this.blockSize;
    const fullFirst = Math.ceil(offset / bs);
    const fullEnd = Math.floor((offset + length) / bs);
    if (fullFirst >= fullEnd) {
      if (!trim) await this.#write(upper, Buffer.alloc(length), offset);
      return;
    }
    await upper.zeroBlocks(fullFirst, fullEnd - fullFirst);
    if (trim) return;
    if (offset < fullFirst * bs) {
      await this.#write(upper, Buffer.alloc(fullFirst * bs - offset), offset);
    }
    if (offset + length > fullEnd * bs) {
      await this.#write(upper, Buffer.alloc(offset + length - fullEnd * bs), fullEnd * bs);
    }
  }

  /** Reads one block (the part inside the device) into `dst`; the rest stays as is. */
  async #readBlock(dst: Buffer, block: number): Promise<void> {
    const start = block * this.blockSize;
    const n = Math.min(this.blockSize, this.size - start);
    await readStack(this.#levels(), dst.subarray(0, n), start, this.blockSize);
  }

  #prefetchRange(r: ByteRange): Promise<void>[] {
    const bs = this.blockSize;
    const first = Math.floor(r.offset / bs);
    let pending: [number, number][] = [[first, Math.ceil((r.offset + r.length) / bs) - first]];
    if (this.#upper !== undefined) pending = absentOnly(this.#upper, pending);
    const jobs: Promise<void>[] = [];
    for (let i = this.#layers.length - 1; i >= 0 && pending.length > 0; i--) {
      const layer = this.#layers[i] as LayerReader;
      const next: [number, number][] = [];
      for (const [b, n] of pending) {
        for (const seg of layer.resolve(b, n)) {
          if (seg.kind === 'absent') next.push([seg.block, seg.count]);
          else if (seg.kind === 'data') jobs.push(layer.prefetch(seg.ref, seg.count * bs));
        }
      }
      pending = next;
    }
    return jobs;
  }

  async #seal(options: SealOptions): Promise<SealResult> {
    this.#assertOpen();
    const sealed = await sealUpper(
      {
        upper: this.#upper as Upper,
        upperDir: this.#upperDir as string,
        image: this.#spec,
        store: this.#store,
        cache: this.#cache,
      },
      options,
    );
    this.#layers.push(sealed.layer);
    this.#upper = sealed.upper;
    this.#upperDir = sealed.upperDir;
    this.#spec = sealed.result.image;
    return sealed.result;
  }

  #check(offset: number, length: number): void {
    this.#assertOpen();
    const ok =
      Number.isSafeInteger(offset) &&
      Number.isSafeInteger(length) &&
      offset >= 0 &&
      length >= 0 &&
      offset + length <= this.size;
    if (!ok) {
      throw new AenvError(
        'STORAGE_OUT_OF_RANGE',
        `range ${offset}+${length} is outside the device`,
        {
          fields: { offset, length, size: this.size },
        },
      );
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new AenvError('STORAGE_CLOSED', 'image device is closed');
  }
}

interface DeviceParts {
  readonly spec: Required<ImageSpec>;
  readonly layers: LayerReader[];
  readonly upper: Upper | undefined;
  readonly upperDir: string | undefined;
  readonly store: BlobStore;
  readonly cache: ChunkCache | undefined;
}

function checkBlockSize(layer: LayerReader, blockSize: number): void {
  if (layer.header.blockSize !== blockSize) {
    throw new AenvError(
      'INVALID_ARGUMENT',
      `layer ${layer.digest} has block size ${layer.header.blockSize}, the image ${blockSize}`,
      { fields: { [LOG_FIELDS.layerDigest]: layer.digest } },
    );
  }
}

function absentOnly(level: StackLevel, ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [b, n] of ranges) {
    for (const seg of level.resolve(b, n))
      if (seg.kind === 'absent') out.push([seg.block, seg.count]);
  }
  return out;
}
