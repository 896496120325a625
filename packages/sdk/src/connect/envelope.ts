/**
 * Connect protocol envelopes (the framing of streaming calls): one flag
 * byte, a 4-byte big-endian length, then that many bytes of message.
 * Flag bit 0x02 marks the end-stream message, which carries the call's
 * outcome (`{}` or `{"error": {...}}`); 0x01 (compression) is never used
 * here, since the SDK sends no `Connect-Content-Encoding`.
 *
 * @module
 */

/** The end-stream flag. */
export const END_STREAM_FLAG = 0x02;

/** The compressed-payload flag (refused: this client never asks for compression). */
export const COMPRESSED_FLAG = 0x01;

/** One decoded envelope. */
export interface Envelope {
  readonly flags: number;
  readonly data: Uint8Array;
}

/** Frames `data` with `flags`. */
export function encodeEnvelope(flags: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + data.length);
  const view = new DataView(out.buffer);
  view.setUint8(0, flags);
  view.setUint32(1, data.length, false);
  out.set(data, 5);
  return out;
}

/**
 * Splits a byte stream into envelopes, whatever the chunking (a frame may
 * span chunks, a chunk may hold many frames). `push` returns the envelopes
 * completed by a chunk; `pending` is the number of bytes still buffered.
 */
export class EnvelopeDecoder {
  #buffer: Uint8Array = new Uint8Array(0);

  /** Adds a chunk; returns every envelope it completes, in order. */
  push(chunk: Uint8Array): Envelope[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : concat(this.#buffer, chunk);
    const out: Envelope[] = [];
    let offset = 0;
    while (this.#buffer.length - offset >= 5) {
      const view = new DataView(this.#buffer.buffer, this.#buffer.byteOffset + offset, 5);
      const length = view.getUint32(1, false);
      if (this.#buffer.length - offset - 5 < length) break;
      const data = this.#buffer.slice(offset + 5, offset + 5 + length);
      out.push({ flags: view.getUint8(0), data });
      offset += 5 + length;
    }
    this.#buffer = this.#buffer.slice(offset);
    return out;
  }

  /** Bytes received that do not form a whole envelope yet. */
  get pending(): number {
    return this.#buffer.length;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
