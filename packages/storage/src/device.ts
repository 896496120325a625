/**
 * The block-device interfaces every disk in aenv is seen through.
 *
 * Contract (shared by every implementation and checked by
 * `runBlockDeviceSuite` in `testing/`):
 * - offsets and lengths are in bytes; any alignment is accepted, `blockSize`
 *   is only the preferred granularity;
 * - a range that does not lie within `[0, size)` throws
 *   `STORAGE_OUT_OF_RANGE` before anything is read or written;
 * - a write is visible to every read that starts after the write's promise
 *   resolved; reads racing with a write to the same bytes see old or new data;
 * - writes, zeroes and trims that overlap take effect in the order they were
 *   called, even when issued without awaiting each other;
 * - a write is durable (survives the process being killed) once a later
 *   `flush()` resolved;
 * - after `close()` every call throws `STORAGE_CLOSED`.
 *
 * @module
 */

/** A device that can be read. */
export interface ReadableDevice {
  /** Size in bytes. */
  readonly size: number;
  /** Preferred I/O granularity in bytes (a power of two). */
  readonly blockSize: number;
  /** Fills `target` with the bytes at `[offset, offset + target.length)`. */
  readAt(target: Uint8Array, offset: number): Promise<void>;
}

/** Options of a write. */
export interface WriteOptions {
  /** Force unit access: the write is durable when the promise resolves. */
  readonly fua?: boolean;
}

/** A device that can also be written. */
export interface WritableDevice extends ReadableDevice {
  /** Writes `data` at `offset`. */
  writeAt(data: Uint8Array, offset: number, options?: WriteOptions): Promise<void>;
  /** Makes `[offset, offset + length)` read as zeros. */
  writeZeroesAt(offset: number, length: number, options?: WriteOptions): Promise<void>;
  /**
   * Discards `[offset, offset + length)`. Whole blocks inside the range read
   * as zeros afterwards; partial blocks at its edges keep their contents.
   */
  trimAt(offset: number, length: number, options?: WriteOptions): Promise<void>;
  /** Makes every write that resolved before this call durable. */
  flush(): Promise<void>;
  /** Flushes and releases the device. Idempotent. */
  close(): Promise<void>;
}
