/**
 * The fixed 128-byte header at offset 0 of every layer blob, format
 * version 1 (`docs/storage-format.md` is the normative description).
 *
 * ```
 * off size field
 *   0    8 magic "AENVLAYR"
 *   8    4 formatVersion (1)
 *  12    4 flags (0; readers reject unknown bits)
 *  16    8 virtualSize      bytes of the disk this layer was made for
 *  24    4 blockSize        extent granularity (bytes, power of two)
 *  28    4 chunkSize        uncompressed bytes per data chunk (multiple of blockSize)
 *  32    4 extentCount
 *  36    4 chunkCount
 *  40    8 dataOffset       where chunk 0 starts (128)
 *  48    8 dataLength       stored bytes of all chunks
 *  56    8 streamLength     uncompressed bytes of all chunks
 *  64    8 indexOffset      dataOffset + dataLength
 *  72    8 indexLength      extentCount * 24 + chunkCount * 48
 *  80   44 reserved (zero)
 * 124    4 CRC-32 of bytes 0..123
 * ```
 * All integers little-endian.
 *
 * @module
 */
import { crc32 } from 'node:zlib';
import { AenvError } from '@aenv/shared';

/** Header size in bytes. */
export const LAYER_HEADER_SIZE = 128;
/** The format version this build writes. */
export const LAYER_FORMAT_VERSION = 1;
/** The 8-byte magic every layer blob starts with. */
export const LAYER_MAGIC = 'AENVLAYR';

/** The decoded header. */
export interface LayerHeader {
  readonly formatVersion: number;
  readonly virtualSize: number;
  readonly blockSize: number;
  readonly chunkSize: number;
  readonly extentCount: number;
  readonly chunkCount: number;
  readonly dataOffset: number;
  readonly dataLength: number;
  readonly streamLength: number;
  readonly indexOffset: number;
  readonly indexLength: number;
}

/** Encodes a header (format version {@link LAYER_FORMAT_VERSION}). */
export function encodeLayerHeader(h: Omit<LayerHeader, 'formatVersion'>): Buffer {
  const b = Buffer.alloc(LAYER_HEADER_SIZE);
  b.write(LAYER_MAGIC, 0, 'latin1');
  b.writeUInt32LE(LAYER_FORMAT_VERSION, 8);
  b.writeUInt32LE(0, 12);
  b.writeBigUInt64LE(BigInt(h.virtualSize), 16);
  b.writeUInt32LE(h.blockSize, 24);
  b.writeUInt32LE(h.chunkSize, 28);
  b.writeUInt32LE(h.extentCount, 32);
  b.writeUInt32LE(h.chunkCount, 36);
  b.writeBigUInt64LE(BigInt(h.dataOffset), 40);
  b.writeBigUInt64LE(BigInt(h.dataLength), 48);
  b.writeBigUInt64LE(BigInt(h.streamLength), 56);
  b.writeBigUInt64LE(BigInt(h.indexOffset), 64);
  b.writeBigUInt64LE(BigInt(h.indexLength), 72);
  b.writeUInt32LE(crc32(b.subarray(0, 124)), 124);
  return b;
}

/**
 * Decodes and checks a header.
 * @throws {AenvError} `LAYER_CORRUPT` (bad magic, checksum or fields),
 *   `LAYER_UNSUPPORTED_VERSION`.
 */
export function decodeLayerHeader(b: Uint8Array, digest: string): LayerHeader {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (buf.length < LAYER_HEADER_SIZE || buf.toString('latin1', 0, 8) !== LAYER_MAGIC) {
    throw corrupt(digest, 'bad magic');
  }
  if (buf.readUInt32LE(124) !== crc32(buf.subarray(0, 124)))
    throw corrupt(digest, 'bad header CRC');
  const formatVersion = buf.readUInt32LE(8);
  if (formatVersion !== LAYER_FORMAT_VERSION) {
    throw new AenvError('LAYER_UNSUPPORTED_VERSION', `layer format ${formatVersion} unknown`, {
      fields: { 'layer.digest': digest, formatVersion },
    });
  }
  if (buf.readUInt32LE(12) !== 0) throw corrupt(digest, 'unknown flags');
  const h: LayerHeader = {
    formatVersion,
    virtualSize: Number(buf.readBigUInt64LE(16)),
    blockSize: buf.readUInt32LE(24),
    chunkSize: buf.readUInt32LE(28),
    extentCount: buf.readUInt32LE(32),
    chunkCount: buf.readUInt32LE(36),
    dataOffset: Number(buf.readBigUInt64LE(40)),
    dataLength: Number(buf.readBigUInt64LE(48)),
    streamLength: Number(buf.readBigUInt64LE(56)),
    indexOffset: Number(buf.readBigUInt64LE(64)),
    indexLength: Number(buf.readBigUInt64LE(72)),
  };
  checkHeader(h, digest);
  return h;
}

function checkHeader(h: LayerHeader, digest: string): void {
  const pow2 = (n: number) => n > 0 && (n & (n - 1)) === 0;
  const ok =
    pow2(h.blockSize) &&
    h.chunkSize >= h.blockSize &&
    h.chunkSize % h.blockSize === 0 &&
    h.dataOffset === LAYER_HEADER_SIZE &&
    h.indexOffset === h.dataOffset + h.dataLength &&
    h.indexLength === h.extentCount * 24 + h.chunkCount * 48 &&
    h.chunkCount === Math.ceil(h.streamLength / h.chunkSize);
  if (!ok) throw corrupt(digest, 'inconsistent header fields');
}

/** A `LAYER_CORRUPT` error for `digest`. */
export function corrupt(digest: string, why: string): AenvError {
  return new AenvError('LAYER_CORRUPT', `layer ${digest} is corrupt: ${why}`, {
    fields: { 'layer.digest': digest },
  });
}
