/**
 * `BlobStore`: where layer blobs live. One small interface with a local
 * directory backend (`FsBlobStore`, the default) and an S3-compatible one
 * (`S3BlobStore`); `runBlobStoreSuite` (in `testing/`) is the contract
 * every backend passes.
 *
 * Contract:
 * - keys are `/`-separated paths of `[A-Za-z0-9._:-]` segments (no empty,
 *   `.` or `..` segment), at most 1024 characters; a key is never both a
 *   blob and a prefix of another blob's key followed by `/`;
 * - `put` is atomic: readers see the old blob, or the whole new one;
 * - `get` streams; `getRange` returns exactly `length` bytes or throws
 *   `STORAGE_OUT_OF_RANGE`; both throw `BLOB_NOT_FOUND` for a missing key;
 * - `head` returns `undefined` for a missing key; `delete` is idempotent;
 * - `list(prefix)` yields every blob whose key starts with `prefix` (a plain
 *   string prefix), in ascending key order;
 * - backend failures throw `BLOB_STORE_UNAVAILABLE` with the cause.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import { AenvError } from '@aenv/shared';

/** What a store knows about one blob. */
export interface BlobInfo {
  readonly key: string;
  readonly size: number;
}

/** What `put` accepts: bytes, a stream, or a local file. */
export type BlobBody = Uint8Array | Readable | { readonly path: string };

/** A store of immutable-by-convention blobs. */
export interface BlobStore {
  /** Backend name, e.g. `fs` or `s3`. */
  readonly kind: string;
  /** Stores `body` under `key`, replacing any blob there. */
  put(key: string, body: BlobBody): Promise<BlobInfo>;
  /** Streams the whole blob. */
  get(key: string): Promise<Readable>;
  /** Reads `length` bytes from `offset`. */
  getRange(key: string, offset: number, length: number): Promise<Buffer>;
  /** Size of the blob, or `undefined` when there is none. */
  head(key: string): Promise<BlobInfo | undefined>;
  /** Removes the blob; removing a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** Every blob whose key starts with `prefix`, in key order. */
  list(prefix?: string): AsyncIterable<BlobInfo>;
  /**
   * Optional capability: a local file holding the blob, for stores whose
   * blobs are local files. Readers may `pread` it instead of `getRange`.
   */
  localPath?(key: string): string | undefined;
  /** Releases connections. Idempotent. */
  close?(): Promise<void>;
}

const SEGMENT = /^[A-Za-z0-9._:-]+$/;

/**
 * Checks a blob key.
 * @throws {AenvError} `INVALID_ARGUMENT` for a malformed key.
 */
export function assertBlobKey(key: string): void {
  const ok =
    typeof key === 'string' &&
    key.length > 0 &&
    key.length <= 1024 &&
    key.split('/').every((s) => SEGMENT.test(s) && s !== '.' && s !== '..');
  if (!ok) {
    throw new AenvError('INVALID_ARGUMENT', `invalid blob key ${JSON.stringify(key)}`, {
      fields: { key: String(key) },
    });
  }
}

/** A `BLOB_NOT_FOUND` error. */
export function blobNotFound(key: string, cause?: unknown): AenvError {
  return new AenvError('BLOB_NOT_FOUND', `no blob ${key}`, { cause, fields: { key } });
}

/** Checks a range request's arguments. */
export function assertRange(key: string, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new AenvError('STORAGE_OUT_OF_RANGE', `bad range ${offset}+${length} of ${key}`, {
      fields: { key, offset, length },
    });
  }
}

/** A `STORAGE_OUT_OF_RANGE` error for a range past a blob's end. */
export function rangePastEnd(key: string, offset: number, length: number, size: number): AenvError {
  return new AenvError(
    'STORAGE_OUT_OF_RANGE',
    `range ${offset}+${length} is past the end of ${key} (${size} bytes)`,
    { fields: { key, offset, length, size } },
  );
}
