/**
 * `ByteQueue`: the bytes a socket delivered and the parser has not consumed
 * yet, as a list of chunks. `take(n)` returns a view without copying when
 * the bytes lie in one chunk (the common case for request headers), and
 * concatenates only across chunk boundaries (large WRITE payloads).
 *
 * @module
 */

/** A FIFO of bytes. */
export class ByteQueue {
  readonly #chunks: Buffer[] = [];
  #head = 0;
  #length = 0;

  /** Bytes waiting. */
  get length(): number {
    return this.#length;
  }

  /** Appends a chunk. */
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  /** Returns (without consuming) the first `n` bytes; `n <= length`. */
  peek(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    const first = this.#chunks[0] as Buffer;
    if (first.length - this.#head >= n) return first.subarray(this.#head, this.#head + n);
    const out = Buffer.allocUnsafe(n);
    let done = 0;
    let i = 0;
    let from = this.#head;
    while (done < n) {
      const c = this.#chunks[i] as Buffer;
      const k = Math.min(c.length - from, n - done);
      c.copy(out, done, from, from + k);
      done += k;
      i += 1;
      from = 0;
    }
    return out;
  }

  /** Removes and returns the first `n` bytes; `n <= length`. */
  take(n: number): Buffer {
    const out = this.peek(n);
    this.skip(n);
    return out;
  }

  /** Drops the first `n` bytes; `n <= length`. */
  skip(n: number): void {
    this.#length -= n;
    let left = n;
    while (left > 0) {
      const c = this.#chunks[0] as Buffer;
      const avail = c.length - this.#head;
      if (avail > left) {
        this.#head += left;
        return;
      }
      left -= avail;
      this.#chunks.shift();
      this.#head = 0;
    }
  }
}
