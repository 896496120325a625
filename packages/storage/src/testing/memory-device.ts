/**
 * `MemoryDevice`: a flat, in-memory `WritableDevice`. It is the reference
 * model the image device is checked against (property tests), and a device
 * for tests that need one without files. Every operation completes
 * synchronously inside its promise, so calls take effect in call order.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { WritableDevice } from '../device.js';

/** A device backed by one Buffer. */
export class MemoryDevice implements WritableDevice {
  readonly size: number;
  readonly blockSize: number;
  /** The contents (exposed for assertions). */
  readonly bytes: Buffer;
  #closed = false;

  constructor(size: number, blockSize = 4096, contents?: Uint8Array) {
    this.size = size;
    this.blockSize = blockSize;
    this.bytes = Buffer.alloc(size);
    if (contents !== undefined) this.bytes.set(contents.subarray(0, size));
  }

  readAt(target: Uint8Array, offset: number): Promise<void> {
    return this.#op(offset, target.length, () => {
      target.set(this.bytes.subarray(offset, offset + target.length));
    });
  }

  writeAt(data: Uint8Array, offset: number): Promise<void> {
    return this.#op(offset, data.length, () => this.bytes.set(data, offset));
  }

  writeZeroesAt(offset: number, length: number): Promise<void> {
    return this.#op(offset, length, () => this.bytes.fill(0, offset, offset + length));
  }

  /** Zeroes the whole blocks inside the range; partial blocks keep their bytes. */
  trimAt(offset: number, length: number): Promise<void> {
    return this.#op(offset, length, () => {
      const first = Math.ceil(offset / this.blockSize) * this.blockSize;
      const end = Math.floor((offset + length) / this.blockSize) * this.blockSize;
      if (first < end) this.bytes.fill(0, first, end);
    });
  }

  flush(): Promise<void> {
    return this.#op(0, 0, () => undefined);
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  /** Runs `fn` at once (so calls take effect in call order), as a promise. */
  #op(offset: number, length: number, fn: () => void): Promise<void> {
    try {
      if (this.#closed) throw new AenvError('STORAGE_CLOSED', 'memory device is closed');
      const inside = Number.isSafeInteger(offset) && length >= 0 && offset >= 0;
      if (!inside || offset + length > this.size) {
        throw new AenvError(
          'STORAGE_OUT_OF_RANGE',
          `range ${offset}+${length} is outside the device`,
        );
      }
      fn();
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}
