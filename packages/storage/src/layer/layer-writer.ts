/**
 * `LayerWriter`: builds one immutable layer blob in a local file, in one
 * pass over the data (import and seal both use it).
 *
 * Feed it extents in ascending block order: `addData()` for blocks with
 * contents, `addZero()` for blocks that must read as zeros and hide the
 * layers below. Blocks never fed are absent from the layer. Data is cut
 * into chunks of `chunkSize` stream bytes; each chunk is stored as is, or
 * deflated when `compression: 'deflate'` and that makes it smaller, and
 * hashed. `finish()` appends the index, writes the header and returns the
 * digest: sha256 over header and index (see `format/layer-index.ts`).
 *
 * Output is deterministic: the same extents and options give the same
 * bytes and digest.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { deflateRaw, constants as zlib } from 'node:zlib';
import { AenvError } from '@aenv/shared';
import { sha256Digest } from '../digest.js';
import { closeFd, openFd, syncData, writeFull } from '../file-io.js';
import {
  LAYER_HEADER_SIZE,
  decodeLayerHeader,
  encodeLayerHeader,
  type LayerHeader,
} from '../format/layer-header.js';
import { Codec, ExtentKind, encodeLayerIndex } from '../format/layer-index.js';
import type { ChunkEntry, Extent } from '../format/layer-index.js';

const deflate = promisify(deflateRaw);

/** The default chunk size: 1 MiB of uncompressed data. */
export const DEFAULT_CHUNK_SIZE = 1 << 20;

/** Chunk compression of a new layer. */
export type LayerCompression = 'none' | 'deflate';

/** Options of {@link LayerWriter.create}. */
export interface LayerWriterOptions {
  readonly virtualSize: number;
  /** @default 4096 */
  readonly blockSize?: number;
  /** @default 1 MiB */
  readonly chunkSize?: number;
  /** @default 'none' */
  readonly compression?: LayerCompression;
  /**
   * Receives each finished chunk, uncompressed, with its cache key
   * ({@link chunkCacheKey}), e.g. to warm a cache with a sealed layer.
   */
  readonly onChunk?: (key: string, plain: Buffer) => void | Promise<void>;
}

/** What a finished layer is. */
export interface BuiltLayer {
  readonly digest: string;
  /** The local file holding the blob. */
  readonly path: string;
  /** Blob size in bytes. */
  readonly size: number;
  readonly header: LayerHeader;
}

type ResolvedOptions = Required<Omit<LayerWriterOptions, 'onChunk'>> &
  Pick<LayerWriterOptions, 'onChunk'>;

/** Builds a layer blob into a file. */
export class LayerWriter {
  readonly #path: string;
  readonly #fd: number;
  readonly #opts: ResolvedOptions;
  readonly #extents: Extent[] = [];
  readonly #chunks: ChunkEntry[] = [];
  readonly #chunk: Buffer;
  #chunkFill = 0;
  #stream = 0;
  #stored = 0;
  #nextBlock = 0;
  #done = false;

  private constructor(path: string, fd: number, opts: ResolvedOptions) {
    this.#path = path;
    this.#fd = fd;
    this.#opts = opts;
    this.#chunk = Buffer.alloc(opts.chunkSize);
  }

  /** Starts a layer in a new file at `path` (replacing any file there). */
  static async create(path: string, options: LayerWriterOptions): Promise<LayerWriter> {
    const opts: ResolvedOptions = {
      virtualSize: options.virtualSize,
      blockSize: options.blockSize ?? 4096,
      chunkSize: options.chunkSize ?? DEFAULT_CHUNK_SIZE,
      compression: options.compression ?? 'none',
      onChunk: options.onChunk,
    };
    if (opts.chunkSize % opts.blockSize !== 0 || opts.chunkSize > 64 << 20) {
      throw new AenvError(
        'INVALID_ARGUMENT',
        'chunkSize must be a multiple of blockSize <= 64 MiB',
      );
    }
    return new LayerWriter(path, await openFd(path, 'w'), opts);
  }

  /** Adds blocks with contents; `data.length` is a multiple of the block size. */
  async addData(block: number, data: Uint8Array): Promise<void> {
    const count = data.length / this.#opts.blockSize;
    if (count === 0) return;
    this.#addExtent(block, count, ExtentKind.data);
    let done = 0;
    while (done < data.length) {
      const n = Math.min(data.length - done, this.#chunk.length - this.#chunkFill);
      this.#chunk.set(data.subarray(done, done + n), this.#chunkFill);
      this.#chunkFill += n;
      done += n;
      if (this.#chunkFill === this.#chunk.length) await this.#flushChunk();
    }
  }

  /** Adds blocks that read as zeros. */
  addZero(block: number, count: number): void {
    if (count > 0) this.#addExtent(block, count, ExtentKind.zero);
  }

  /** Writes index and header, syncs and closes the file. */
  async finish(): Promise<BuiltLayer> {
    if (this.#chunkFill > 0) await this.#flushChunk();
    this.#done = true;
    const index = encodeLayerIndex(this.#extents, this.#chunks);
    const header = encodeLayerHeader({
      virtualSize: this.#opts.virtualSize,
      blockSize: this.#opts.blockSize,
      chunkSize: this.#opts.chunkSize,
      extentCount: this.#extents.length,
      chunkCount: this.#chunks.length,
      dataOffset: LAYER_HEADER_SIZE,
      dataLength: this.#stored,
      streamLength: this.#stream,
      indexOffset: LAYER_HEADER_SIZE + this.#stored,
      indexLength: index.length,
    });
    try {
      await writeFull(this.#fd, index, LAYER_HEADER_SIZE + this.#stored);
      await writeFull(this.#fd, header, 0);
      await syncData(this.#fd);
    } finally {
      await closeFd(this.#fd);
    }
    const digest = sha256Digest(header, index);
    return {
      digest,
      path: this.#path,
      size: LAYER_HEADER_SIZE + this.#stored + index.length,
      header: decodeLayerHeader(header, digest),
    };
  }

  /** Gives up: closes and deletes the file. Idempotent. */
  async abort(): Promise<void> {
    if (!this.#done) {
      this.#done = true;
      await closeFd(this.#fd).catch(() => undefined);
    }
    await rm(this.#path, { force: true });
  }

  #addExtent(block: number, count: number, kind: 1 | 2): void {
    const maxBlock = Math.ceil(this.#opts.virtualSize / this.#opts.blockSize);
    if (this.#done || block < this.#nextBlock || block + count > maxBlock) {
      throw new AenvError('INVALID_ARGUMENT', `extent ${block}+${count} is out of order or range`);
    }
    const last = this.#extents[this.#extents.length - 1];
    const streamOffset = kind === ExtentKind.data ? this.#stream + this.#chunkFill : 0;
    if (last !== undefined && last.kind === kind && last.block + last.count === block) {
      this.#extents[this.#extents.length - 1] = { ...last, count: last.count + count };
    } else {
      this.#extents.push({ block, count, kind, streamOffset });
    }
    this.#nextBlock = block + count;
  }

  async #flushChunk(): Promise<void> {
    const plain = this.#chunk.subarray(0, this.#chunkFill);
    let stored: Buffer = plain;
    let codec: 0 | 1 = Codec.none;
    if (this.#opts.compression === 'deflate') {
      const packed = await deflate(plain, { level: zlib.Z_BEST_SPEED });
      if (packed.length < plain.length) {
        stored = packed;
        codec = Codec.deflate;
      }
    }
    const sha256 = createHash('sha256').update(stored).digest();
    await writeFull(this.#fd, stored, LAYER_HEADER_SIZE + this.#stored);
    if (this.#opts.onChunk !== undefined) {
      await this.#opts.onChunk(chunkCacheKey(sha256, codec), Buffer.from(plain));
    }
    this.#chunks.push({ storedOffset: this.#stored, storedLength: stored.length, codec, sha256 });
    this.#stored += stored.length;
    this.#stream += this.#chunkFill;
    this.#chunkFill = 0;
  }
}

/**
 * The cache key of a chunk: its stored bytes' sha256 and its codec. Chunks
 * are content-addressed, so identical chunks of different layers share one
 * cache entry, and a just-sealed layer's chunks can be cached before its
 * digest is known.
 */
export function chunkCacheKey(sha256: Uint8Array, codec: number): string {
  return `${Buffer.from(sha256.buffer, sha256.byteOffset, sha256.byteLength).toString('hex')}.${codec}`;
}
