/**
 * Connect protocol envelopes (the framing of streaming calls): a flag
 * byte (bit 0 compressed, bit 1 end of stream), a big-endian 32-bit length
 * and the message. The decoder takes chunks as they arrive, split or
 * merged anywhere.
 *
 * @module
 */

/** The end-of-stream flag: the message is `{}` or `{error: {code, message}}`. */
export const END_STREAM = 0b10;

/** One envelope. */
export interface Frame {
  readonly flags: number;
  readonly data: Buffer;
}

/** Frames one message. */
export function encodeFrame(flags: number, data: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

/** Splits a byte stream into envelopes. */
export class FrameDecoder {
  #pending: Buffer = Buffer.alloc(0);

  /** Adds a chunk; returns the envelopes it completed. */
  push(chunk: Uint8Array): Frame[] {
    this.#pending = Buffer.concat([this.#pending, chunk]);
    const out: Frame[] = [];
    while (this.#pending.length >= 5) {
      const length = this.#pending.readUInt32BE(1);
      if (this.#pending.length < 5 + length) break;
      out.push({
        flags: this.#pending.readUInt8(0),
        data: this.#pending.subarray(5, 5 + length),
      });
      this.#pending = this.#pending.subarray(5 + length);
    }
    return out;
  }
}
