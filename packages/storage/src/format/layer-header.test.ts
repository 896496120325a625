import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LAYER_HEADER_SIZE, decodeLayerHeader, encodeLayerHeader } from './layer-header.js';

const fields = {
  virtualSize: 1 << 30,
  blockSize: 4096,
  chunkSize: 1 << 20,
  extentCount: 3,
  chunkCount: 2,
  dataOffset: LAYER_HEADER_SIZE,
  dataLength: 1_500_000,
  streamLength: (1 << 20) + 4096,
  indexOffset: LAYER_HEADER_SIZE + 1_500_000,
  indexLength: 3 * 24 + 2 * 48,
};

describe('layer header', () => {
  it('round-trips and starts with the magic', () => {
    const b = encodeLayerHeader(fields);
    assert.equal(b.length, LAYER_HEADER_SIZE);
    assert.equal(b.toString('latin1', 0, 8), 'AENVLAYR');
    assert.deepEqual(decodeLayerHeader(b, 'sha256:x'), { formatVersion: 1, ...fields });
  });

  it('rejects a flipped bit as LAYER_CORRUPT', () => {
    const b = encodeLayerHeader(fields);
    b[20] = (b[20] as number) ^ 1;
    assert.throws(() => decodeLayerHeader(b, 'sha256:x'), { code: 'LAYER_CORRUPT' });
  });

  it('rejects another format version as LAYER_UNSUPPORTED_VERSION', async () => {
    const b = encodeLayerHeader(fields);
    b.writeUInt32LE(2, 8);
    const { crc32 } = await import('node:zlib');
    b.writeUInt32LE(crc32(b.subarray(0, 124)), 124);
    assert.throws(() => decodeLayerHeader(b, 'sha256:x'), { code: 'LAYER_UNSUPPORTED_VERSION' });
  });

  it('rejects inconsistent fields', () => {
    const b = encodeLayerHeader({ ...fields, chunkCount: 5 });
    assert.throws(() => decodeLayerHeader(b, 'sha256:x'), { code: 'LAYER_CORRUPT' });
  });
});
