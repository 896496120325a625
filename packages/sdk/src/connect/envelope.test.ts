import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { END_STREAM_FLAG, EnvelopeDecoder, encodeEnvelope } from './envelope.js';
import { fromBase64, toBase64 } from './base64.js';

const text = (b: Uint8Array): string => new TextDecoder().decode(b);
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('Connect envelopes', () => {
  it('frame with a flag byte and a big-endian length', () => {
    const frame = encodeEnvelope(END_STREAM_FLAG, bytes('{}'));
    assert.deepEqual([...frame], [2, 0, 0, 0, 2, 0x7b, 0x7d]);
    const big = encodeEnvelope(0, new Uint8Array(70_000));
    assert.deepEqual([...big.subarray(0, 5)], [0, 0, 1, 0x11, 0x70]);
  });

  it('decode whatever the chunking: byte by byte, and many frames in one chunk', () => {
    const frames = [
      encodeEnvelope(0, bytes('{"a":1}')),
      encodeEnvelope(0, bytes('')),
      encodeEnvelope(2, bytes('{}')),
    ];
    const all = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
    let at = 0;
    for (const f of frames) {
      all.set(f, at);
      at += f.length;
    }
    const oneByOne = new EnvelopeDecoder();
    const got = [];
    for (const b of all) got.push(...oneByOne.push(Uint8Array.of(b)));
    assert.deepEqual(
      got.map((e) => [e.flags, text(e.data)]),
      [
        [0, '{"a":1}'],
        [0, ''],
        [2, '{}'],
      ],
    );
    assert.equal(oneByOne.pending, 0);
    const atOnce = new EnvelopeDecoder().push(all);
    assert.equal(atOnce.length, 3);
    const partial = new EnvelopeDecoder();
    assert.deepEqual(partial.push(all.subarray(0, 8)), []);
    assert.equal(partial.pending, 8);
  });
});

describe('base64', () => {
  it('round-trips binary data and accepts URL-safe, unpadded input', () => {
    const data = new Uint8Array(100_000).map((_, i) => (i * 7919) % 256);
    assert.deepEqual(fromBase64(toBase64(data)), data);
    assert.equal(toBase64(bytes('hi\n')), 'aGkK');
    assert.deepEqual(fromBase64('-_8'), Uint8Array.of(0xfb, 0xff));
  });
});
