/**
 * The index of a layer blob (format version 1): the extent table, then the
 * chunk table, stored after the data (`docs/storage-format.md`).
 *
 * ```
 * extent, 24 bytes, sorted by firstBlock, non-overlapping:
 *   0 8 firstBlock
 *   8 4 blockCount
 *  12 4 kind          1 = data, 2 = zero
 *  16 8 streamOffset  (data) offset of firstBlock in the uncompressed data stream
 * chunk, 48 bytes, in stream order:
 *   0 8 storedOffset  relative to dataOffset
 *   8 4 storedLength
 *  12 4 codec         0 = none, 1 = deflate (raw)
 *  16 32 sha256 of the stored bytes
 * ```
 * Chunk i holds stream bytes `[i * chunkSize, min((i + 1) * chunkSize, streamLength))`.
 * The layer digest is sha256(header ‖ index): the index commits to every
 * stored byte through the chunk hashes, so a lazily fetched chunk is
 * verified on its own.
 *
 * In memory the tables are kept as typed arrays (no object per extent).
 *
 * @module
 */
import type { LayerHeader } from './layer-header.js';
import { corrupt } from './layer-header.js';

/** Extent kinds. */
export const ExtentKind = Object.freeze({ data: 1, zero: 2 });
/** Chunk codecs. */
export const Codec = Object.freeze({ none: 0, deflate: 1 });

/** Size of one extent entry. */
export const EXTENT_ENTRY_SIZE = 24;
/** Size of one chunk entry. */
export const CHUNK_ENTRY_SIZE = 48;

/** One extent, as the writer produces it. */
export interface Extent {
  readonly block: number;
  readonly count: number;
  readonly kind: 1 | 2;
  readonly streamOffset: number;
}

/** One chunk, as the writer produces it. */
export interface ChunkEntry {
  readonly storedOffset: number;
  readonly storedLength: number;
  readonly codec: 0 | 1;
  readonly sha256: Buffer;
}

/** The decoded index, as parallel typed arrays. */
export interface LayerIndex {
  readonly extentBlock: Float64Array;
  readonly extentCount: Uint32Array;
  readonly extentKind: Uint8Array;
  readonly extentStream: Float64Array;
  readonly chunkOffset: Float64Array;
  readonly chunkLength: Uint32Array;
  readonly chunkCodec: Uint8Array;
  /** sha256 of chunk i at `[i * 32, i * 32 + 32)`. */
  readonly chunkHash: Buffer;
}

/** Encodes the index. */
export function encodeLayerIndex(
  extents: readonly Extent[],
  chunks: readonly ChunkEntry[],
): Buffer {
  const b = Buffer.alloc(extents.length * EXTENT_ENTRY_SIZE + chunks.length * CHUNK_ENTRY_SIZE);
  let o = 0;
  for (const e of extents) {
    b.writeBigUInt64LE(BigInt(e.block), o);
    b.writeUInt32LE(e.count, o + 8);
    b.writeUInt32LE(e.kind, o + 12);
    b.writeBigUInt64LE(BigInt(e.streamOffset), o + 16);
    o += EXTENT_ENTRY_SIZE;
  }
  for (const c of chunks) {
    b.writeBigUInt64LE(BigInt(c.storedOffset), o);
    b.writeUInt32LE(c.storedLength, o + 8);
    b.writeUInt32LE(c.codec, o + 12);
    c.sha256.copy(b, o + 16);
    o += CHUNK_ENTRY_SIZE;
  }
  return b;
}

/**
 * Decodes and checks the index against its header.
 * @throws {AenvError} `LAYER_CORRUPT` when entries are out of order, overlap
 *   or point outside the data.
 */
export function decodeLayerIndex(b: Buffer, h: LayerHeader, digest: string): LayerIndex {
  const idx: LayerIndex = {
    extentBlock: new Float64Array(h.extentCount),
    extentCount: new Uint32Array(h.extentCount),
    extentKind: new Uint8Array(h.extentCount),
    extentStream: new Float64Array(h.extentCount),
    chunkOffset: new Float64Array(h.chunkCount),
    chunkLength: new Uint32Array(h.chunkCount),
    chunkCodec: new Uint8Array(h.chunkCount),
    chunkHash: Buffer.alloc(h.chunkCount * 32),
  };
  decodeExtents(b, h, idx, digest);
  decodeChunks(b, h, idx, digest);
  return idx;
}

function decodeExtents(b: Buffer, h: LayerHeader, idx: LayerIndex, digest: string): void {
  const maxBlock = Math.ceil(h.virtualSize / h.blockSize);
  let nextBlock = 0;
  let stream = 0;
  for (let i = 0; i < h.extentCount; i++) {
    const o = i * EXTENT_ENTRY_SIZE;
    const block = Number(b.readBigUInt64LE(o));
    const count = b.readUInt32LE(o + 8);
    const kind = b.readUInt32LE(o + 12);
    const streamOffset = Number(b.readBigUInt64LE(o + 16));
    if (block < nextBlock || count === 0 || block + count > maxBlock) {
      throw corrupt(digest, `extent ${i} is out of order or out of range`);
    }
    if (kind === ExtentKind.data) {
      if (streamOffset !== stream) throw corrupt(digest, `extent ${i} has a wrong stream offset`);
      stream += count * h.blockSize;
    } else if (kind !== ExtentKind.zero) {
      throw corrupt(digest, `extent ${i} has unknown kind ${kind}`);
    }
    idx.extentBlock[i] = block;
    idx.extentCount[i] = count;
    idx.extentKind[i] = kind;
    idx.extentStream[i] = streamOffset;
    nextBlock = block + count;
  }
  if (stream !== h.streamLength) throw corrupt(digest, 'extents do not cover the data stream');
}

function decodeChunks(b: Buffer, h: LayerHeader, idx: LayerIndex, digest: string): void {
  const base = h.extentCount * EXTENT_ENTRY_SIZE;
  let stored = 0;
  for (let i = 0; i < h.chunkCount; i++) {
    const o = base + i * CHUNK_ENTRY_SIZE;
    const offset = Number(b.readBigUInt64LE(o));
    const length = b.readUInt32LE(o + 8);
    const codec = b.readUInt32LE(o + 12);
    if (offset !== stored || (codec !== Codec.none && codec !== Codec.deflate)) {
      throw corrupt(digest, `chunk ${i} has a wrong offset or codec`);
    }
    if (codec === Codec.none && length !== chunkPlainLength(h, i)) {
      throw corrupt(digest, `chunk ${i} has a wrong length`);
    }
    idx.chunkOffset[i] = offset;
    idx.chunkLength[i] = length;
    idx.chunkCodec[i] = codec;
    b.copy(idx.chunkHash, i * 32, o + 16, o + 48);
    stored += length;
  }
  if (stored !== h.dataLength) throw corrupt(digest, 'chunks do not cover the data section');
}

/** Uncompressed length of chunk `i`. */
export function chunkPlainLength(h: LayerHeader, i: number): number {
  return Math.min(h.chunkSize, h.streamLength - i * h.chunkSize);
}
