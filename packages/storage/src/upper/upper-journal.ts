/**
 * The on-disk layout of a writable upper's journal (see
 * `docs/storage-format.md`, "Writable upper"): a 64-byte header followed by
 * 32-byte records.
 *
 * Header: magic `AENVUPPR`, format version, block size, virtual size, the
 * sha256 of the stack the upper sits on, CRC-32 of the header.
 * Record: kind (data, zero, flush), block count, first block, data-file
 * offset, CRC-32 of the data it points to, CRC-32 of the record.
 *
 * This module only encodes and decodes; `upper.ts` owns the fsync order and
 * recovery.
 *
 * @module
 */
import { crc32 } from 'node:zlib';
import { AenvError } from '@aenv/shared';

/** Journal header size in bytes. */
export const JOURNAL_HEADER_SIZE = 64;
/** Journal record size in bytes. */
export const RECORD_SIZE = 32;
/** The journal format version this build writes and reads. */
export const UPPER_FORMAT_VERSION = 1;

const MAGIC = Buffer.from('AENVUPPR', 'latin1');

/** What the journal header records. */
export interface JournalHeader {
  readonly blockSize: number;
  readonly virtualSize: number;
  /** sha256 (hex) of the stack below the upper; see `stackHash()`. */
  readonly stackHash: string;
}

/** Record kinds. */
export const RecordKind = Object.freeze({ data: 1, zero: 2, flush: 3 });

/** One journal record. */
export interface JournalRecord {
  readonly kind: 1 | 2 | 3;
  readonly block: number;
  readonly count: number;
  /** Data-file offset of `block` (data records), else 0. */
  readonly dataOffset: number;
  /** CRC-32 of the `count` blocks of data (data records), else 0. */
  readonly dataCrc: number;
}

/** Encodes the journal header. */
export function encodeJournalHeader(h: JournalHeader): Buffer {
  const b = Buffer.alloc(JOURNAL_HEADER_SIZE);
  MAGIC.copy(b, 0);
  b.writeUInt32LE(UPPER_FORMAT_VERSION, 8);
  b.writeUInt32LE(h.blockSize, 12);
  b.writeBigUInt64LE(BigInt(h.virtualSize), 16);
  Buffer.from(h.stackHash, 'hex').copy(b, 24);
  b.writeUInt32LE(crc32(b.subarray(0, 60)), 60);
  return b;
}

/**
 * Decodes the journal header.
 * @throws {AenvError} `STORAGE_UPPER_CORRUPT` when damaged or of another version.
 */
export function decodeJournalHeader(b: Buffer, path: string): JournalHeader {
  const ok =
    b.length >= JOURNAL_HEADER_SIZE &&
    b.subarray(0, 8).equals(MAGIC) &&
    b.readUInt32LE(60) === crc32(b.subarray(0, 60));
  if (!ok) {
    throw new AenvError('STORAGE_UPPER_CORRUPT', `upper journal header is damaged: ${path}`, {
      fields: { path },
    });
  }
  const version = b.readUInt32LE(8);
  if (version !== UPPER_FORMAT_VERSION) {
    throw new AenvError('STORAGE_UPPER_CORRUPT', `upper journal version ${version} unknown`, {
      fields: { path, version },
    });
  }
  return {
    blockSize: b.readUInt32LE(12),
    virtualSize: Number(b.readBigUInt64LE(16)),
    stackHash: b.subarray(24, 56).toString('hex'),
  };
}

/** Encodes `records` back to back into one buffer. */
export function encodeRecords(records: readonly JournalRecord[]): Buffer {
  const b = Buffer.alloc(records.length * RECORD_SIZE);
  records.forEach((r, i) => {
    const o = i * RECORD_SIZE;
    b.writeUInt8(r.kind, o);
    b.writeUInt32LE(r.count, o + 4);
    b.writeBigUInt64LE(BigInt(r.block), o + 8);
    b.writeBigUInt64LE(BigInt(r.dataOffset), o + 16);
    b.writeUInt32LE(r.dataCrc, o + 24);
    b.writeUInt32LE(crc32(b.subarray(o, o + 28)), o + 28);
  });
  return b;
}

/**
 * Decodes the record at `offset` of `b`, or returns `undefined` when it is
 * torn, zeroed or otherwise invalid (the end of the usable journal).
 */
export function decodeRecord(b: Buffer, offset: number): JournalRecord | undefined {
  if (offset + RECORD_SIZE > b.length) return undefined;
  if (b.readUInt32LE(offset + 28) !== crc32(b.subarray(offset, offset + 28))) return undefined;
  const kind = b.readUInt8(offset);
  if (kind !== 1 && kind !== 2 && kind !== 3) return undefined;
  return {
    kind,
    count: b.readUInt32LE(offset + 4),
    block: Number(b.readBigUInt64LE(offset + 8)),
    dataOffset: Number(b.readBigUInt64LE(offset + 16)),
    dataCrc: b.readUInt32LE(offset + 24),
  };
}
