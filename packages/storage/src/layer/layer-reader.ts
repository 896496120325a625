/**
 * `LayerReader`: one immutable layer, opened lazily from a blob store.
 *
 * Opening fetches only the header and the index (two range reads) and
 * checks them against the digest. Data is read in chunks on first use:
 * - from a store with local files (`localPath`), uncompressed chunks are
 *   read in place with `pread`: no copy, no cache;
 * - otherwise each chunk is fetched with one range request, checked against
 *   its sha256 from the index, inflated if compressed, and kept in the
 *   `ChunkCache` (concurrent readers of one chunk share one fetch).
 *
 * As a stack level it answers with `data`, `zero` or `absent` segments;
 * `ref` of a data segment is an offset in the layer's uncompressed data
 * stream.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { inflateRaw } from 'node:zlib';
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import type { BlobStore } from '../blob/blob-store.js';
import type { ChunkCache, LoadedChunk } from '../cache/chunk-cache.js';
import type { LayerMeta } from '../cache/layer-meta-cache.js';
import { layerKey, sha256Digest } from '../digest.js';
import { publish, STORAGE_CHANNELS } from '../events.js';
import { closeFd, openFd, readFull } from '../file-io.js';
import {
  LAYER_HEADER_SIZE,
  corrupt,
  decodeLayerHeader,
  type LayerHeader,
} from '../format/layer-header.js';
import {
  Codec,
  ExtentKind,
  chunkPlainLength,
  decodeLayerIndex,
  type LayerIndex,
} from '../format/layer-index.js';
import type { Segment, StackLevel } from '../image/stack-level.js';
import { chunkCacheKey } from './layer-writer.js';

const inflate = promisify(inflateRaw);

/** Where a layer's bytes come from. */
export interface LayerSource {
  readonly store: BlobStore;
  /** Cache for chunks fetched from a remote store. Without it every read fetches. */
  readonly cache?: ChunkCache | undefined;
}

/** An opened layer. */
export class LayerReader implements StackLevel {
  readonly digest: string;
  readonly header: LayerHeader;
  readonly index: LayerIndex;
  readonly #key: string;
  readonly #source: LayerSource;
  readonly #fd: number | undefined;
  #closed = false;

  private constructor(digest: string, parts: Parts, source: LayerSource) {
    this.digest = digest;
    this.header = parts.header;
    this.index = parts.index;
    this.#key = layerKey(digest);
    this.#source = source;
    this.#fd = parts.fd;
  }

  /**
   * Opens a layer: fetches and verifies its header and index.
   * @throws {AenvError} `LAYER_NOT_FOUND`, `LAYER_CORRUPT`, `LAYER_UNSUPPORTED_VERSION`.
   */
  static async open(digest: string, source: LayerSource): Promise<LayerReader> {
    const key = layerKey(digest);
    const local = source.store.localPath?.(key);
    const fd = local !== undefined && existsSync(local) ? await openFd(local, 'r') : undefined;
    try {
      const kept = fd === undefined ? source.cache?.layers.get(digest) : undefined;
      const meta = kept ?? (await fetchMeta(source.store, digest, fd));
      if (kept === undefined && fd === undefined) source.cache?.layers.set(digest, meta);
      const header = decodeLayerHeader(meta.header, digest);
      const index = decodeLayerIndex(meta.index, header, digest);
      return new LayerReader(digest, { header, index, fd }, source);
    } catch (err) {
      if (fd !== undefined) await closeFd(fd);
      throw err;
    }
  }

  /** Number of blocks the layer spans (its virtual size in blocks). */
  get blocks(): number {
    return Math.ceil(this.header.virtualSize / this.header.blockSize);
  }

  resolve(block: number, count: number): Segment[] {
    const idx = this.index;
    const n = this.header.extentCount;
    const bs = this.header.blockSize;
    const end = block + count;
    const out: Segment[] = [];
    let i = this.#find(block);
    let pos = block;
    while (pos < end) {
      const start = i < n ? (idx.extentBlock[i] as number) : Number.POSITIVE_INFINITY;
      if (start >= end) {
        out.push({ kind: 'absent', block: pos, count: end - pos });
        break;
      }
      if (start > pos) {
        out.push({ kind: 'absent', block: pos, count: start - pos });
        pos = start;
      }
      const segEnd = Math.min(start + (idx.extentCount[i] as number), end);
      if (idx.extentKind[i] === ExtentKind.data) {
        const ref = (idx.extentStream[i] as number) + (pos - start) * bs;
        out.push({ kind: 'data', block: pos, count: segEnd - pos, ref });
      } else {
        out.push({ kind: 'zero', block: pos, count: segEnd - pos });
      }
      pos = segEnd;
      i += 1;
    }
    return out;
  }

  async readData(target: Uint8Array, ref: number): Promise<void> {
    this.#assertOpen();
    const cs = this.header.chunkSize;
    const reads: Promise<void>[] = [];
    for (let done = 0; done < target.length;) {
      const at = ref + done;
      const chunk = Math.floor(at / cs);
      const within = at - chunk * cs;
      const n = Math.min(target.length - done, cs - within);
      reads.push(this.#readChunk(chunk, target.subarray(done, done + n), within));
      done += n;
    }
    await Promise.all(reads);
  }

  /** Fetches into the cache the chunks holding stream bytes `[ref, ref + length)`. */
  async prefetch(ref: number, length: number): Promise<void> {
    const cache = this.#source.cache;
    if (cache === undefined || length <= 0) return;
    const cs = this.header.chunkSize;
    const jobs: Promise<void>[] = [];
    for (let c = Math.floor(ref / cs); c <= Math.floor((ref + length - 1) / cs); c++) {
      if (this.#direct(c)) continue;
      jobs.push(cache.ensure(this.#cacheKey(c), () => this.#load(c)));
    }
    await Promise.all(jobs);
  }

  /** Releases the local file, if any. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#fd !== undefined) await closeFd(this.#fd);
  }

  /** Index of the first extent that ends after `block`. */
  #find(block: number): number {
    const idx = this.index;
    let lo = 0;
    let hi = this.header.extentCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const end = (idx.extentBlock[mid] as number) + (idx.extentCount[mid] as number);
      if (end <= block) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #cacheKey(chunk: number): string {
    const hash = this.index.chunkHash.subarray(chunk * 32, chunk * 32 + 32);
    return chunkCacheKey(hash, this.index.chunkCodec[chunk] as number);
  }

  #direct(chunk: number): boolean {
    return this.#fd !== undefined && this.index.chunkCodec[chunk] === Codec.none;
  }

  async #readChunk(chunk: number, target: Uint8Array, within: number): Promise<void> {
    if (this.#direct(chunk)) {
      const at = this.header.dataOffset + (this.index.chunkOffset[chunk] as number) + within;
      await readFull(this.#fd as number, target, at);
      return;
    }
    const cache = this.#source.cache;
    if (cache !== undefined) {
      await cache.read(this.#cacheKey(chunk), target, within, () => this.#load(chunk));
      return;
    }
    const { plain } = await this.#load(chunk);
    target.set(plain.subarray(within, within + target.length));
  }

  async #load(chunk: number): Promise<LoadedChunk> {
    const started = performance.now();
    const offset = this.header.dataOffset + (this.index.chunkOffset[chunk] as number);
    const length = this.index.chunkLength[chunk] as number;
    const stored = await readBlob(this.#source.store, this.#key, this.#fd, offset, length);
    const hash = createHash('sha256').update(stored).digest();
    if (!hash.equals(this.index.chunkHash.subarray(chunk * 32, chunk * 32 + 32))) {
      throw corrupt(this.digest, `chunk ${chunk} does not match its hash`);
    }
    const plainLength = chunkPlainLength(this.header, chunk);
    const plain = this.index.chunkCodec[chunk] === Codec.deflate ? await inflate(stored) : stored;
    if (plain.length !== plainLength) throw corrupt(this.digest, `chunk ${chunk} inflates wrongly`);
    const fetchedBytes = this.#fd === undefined ? stored.length : 0;
    publish(STORAGE_CHANNELS.fetch, {
      [LOG_FIELDS.layerDigest]: this.digest,
      [LOG_FIELDS.chunkIndex]: chunk,
      [LOG_FIELDS.bytes]: fetchedBytes,
      [LOG_FIELDS.durationMs]: performance.now() - started,
    });
    return { plain, fetchedBytes };
  }

  #assertOpen(): void {
    if (this.#closed) throw new AenvError('STORAGE_CLOSED', `layer ${this.digest} is closed`);
  }
}

interface Parts {
  readonly header: LayerHeader;
  readonly index: LayerIndex;
  readonly fd: number | undefined;
}

/** Reads and verifies a layer's header and index (from its local file when `fd` is set). */
async function fetchMeta(
  store: BlobStore,
  digest: string,
  fd: number | undefined,
): Promise<LayerMeta> {
  const key = layerKey(digest);
  const read = (offset: number, length: number) => readBlob(store, key, fd, offset, length);
  const header = await read(0, LAYER_HEADER_SIZE).catch((err: unknown) => {
    throw notFound(err, digest);
  });
  const decoded = decodeLayerHeader(header, digest);
  const index = await read(decoded.indexOffset, decoded.indexLength);
  if (sha256Digest(header, index) !== digest) {
    throw corrupt(digest, 'header and index do not match the digest');
  }
  return { header, index };
}

async function readBlob(
  store: BlobStore,
  key: string,
  fd: number | undefined,
  offset: number,
  length: number,
): Promise<Buffer> {
  if (fd === undefined) return store.getRange(key, offset, length);
  const buf = Buffer.allocUnsafe(length);
  await readFull(fd, buf, offset);
  return buf;
}

function notFound(err: unknown, digest: string): unknown {
  if (err instanceof AenvError && err.code === 'BLOB_NOT_FOUND') {
    return new AenvError('LAYER_NOT_FOUND', `layer ${digest} is not in the blob store`, {
      cause: err,
      fields: { [LOG_FIELDS.layerDigest]: digest },
    });
  }
  return err;
}
