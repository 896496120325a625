/**
 * A bounded, rotating log file with an in-memory tail: the sink of a VM's
 * serial console.
 *
 * The guest controls what it prints, so the log must not grow without
 * bound: when the current file would pass half of `maxBytes` it is renamed
 * to `<path>.1` (replacing the previous one) and a fresh file starts, so the
 * two together never exceed `maxBytes` and the newest output is always kept.
 * Writes are synchronous appends: console output is small, and ordering
 * with rotation stays trivial.
 *
 * @module
 */
import { closeSync, fstatSync, openSync, renameSync, writeSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** Options of {@link BoundedLog}. */
export interface BoundedLogOptions {
  /** Most bytes kept on disk across the file and its one rotation. @default 2 MiB */
  readonly maxBytes?: number;
  /** Characters of recent output kept in memory. @default 64 KiB */
  readonly tailChars?: number;
}

/** Default of {@link BoundedLogOptions.maxBytes}. */
export const DEFAULT_LOG_MAX_BYTES = 2 * 1024 * 1024;

/** See the module comment. */
export class BoundedLog {
  readonly path: string;
  readonly #half: number;
  readonly #tailChars: number;
  readonly #decoder = new StringDecoder('utf8');
  #fd: number | undefined;
  #size: number;
  #tail = '';

  constructor(path: string, options: BoundedLogOptions = {}) {
    const max = options.maxBytes ?? DEFAULT_LOG_MAX_BYTES;
    if (!Number.isSafeInteger(max) || max < 2)
      throw new RangeError(`maxBytes must be >= 2, got ${max}`);
    this.path = path;
    this.#half = Math.floor(max / 2);
    this.#tailChars = options.tailChars ?? 64 * 1024;
    this.#fd = openSync(path, 'a');
    this.#size = fstatSync(this.#fd).size;
  }

  /** Appends a chunk (after close: only the in-memory tail is updated). */
  write(chunk: Buffer): void {
    this.#appendTail(this.#decoder.write(chunk));
    if (this.#fd === undefined) return;
    let data = chunk;
    if (data.length > this.#half) data = data.subarray(data.length - this.#half);
    if (this.#size + data.length > this.#half) this.#rotate();
    writeSync(this.#fd, data);
    this.#size += data.length;
  }

  /** The most recent output, as text. */
  tail(): string {
    return this.#tail.length > this.#tailChars ? this.#tail.slice(-this.#tailChars) : this.#tail;
  }

  /** Closes the file; idempotent. */
  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  #rotate(): void {
    closeSync(this.#fd as number);
    renameSync(this.path, `${this.path}.1`);
    this.#fd = openSync(this.path, 'w');
    this.#size = 0;
  }

  #appendTail(text: string): void {
    this.#tail += text;
    if (this.#tail.length > this.#tailChars * 2) this.#tail = this.#tail.slice(-this.#tailChars);
  }
}
