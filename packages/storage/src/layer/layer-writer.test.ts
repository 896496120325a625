import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, type TempDir } from '../../test/helpers/tmp.js';
import { withoutLocalPath } from '../../test/helpers/without-local-path.js';
import { FsBlobStore } from '../blob/fs-blob-store.js';
import { layerKey } from '../digest.js';
import { LayerReader } from './layer-reader.js';
import { LayerWriter, type LayerWriterOptions } from './layer-writer.js';

const BS = 4096;

describe('LayerWriter + LayerReader', () => {
  let dir: TempDir;
  let store: FsBlobStore;
  before(async () => {
    dir = await tempDir();
    store = new FsBlobStore(join(dir.path, 'store'));
  });
  after(async () => dir.remove());

  async function build(opts: Partial<LayerWriterOptions>, feed: (w: LayerWriter) => Promise<void>) {
    const w = await LayerWriter.create(join(dir.path, 'layer.tmp'), {
      virtualSize: 64 * BS,
      chunkSize: 4 * BS,
      ...opts,
    });
    await feed(w);
    const built = await w.finish();
    await store.put(layerKey(built.digest), { path: built.path });
    return built;
  }

  it('round-trips data, zero and absent extents, with and without compression', async () => {
    const a = randomBytes(5 * BS);
    const b = Buffer.alloc(3 * BS, 0x5a);
    for (const compression of ['none', 'deflate'] as const) {
      const built = await build({ compression }, async (w) => {
        await w.addData(1, a);
        w.addZero(6, 2);
        await w.addData(8, b);
        await w.addData(11, Buffer.alloc(BS, 1));
      });
      const layer = await LayerReader.open(built.digest, { store });
      try {
        assert.deepEqual(layer.resolve(0, 14), [
          { kind: 'absent', block: 0, count: 1 },
          { kind: 'data', block: 1, count: 5, ref: 0 },
          { kind: 'zero', block: 6, count: 2 },
          { kind: 'data', block: 8, count: 4, ref: 5 * BS },
          { kind: 'absent', block: 12, count: 2 },
        ]);
        const out = Buffer.alloc(5 * BS);
        await layer.readData(out, 0);
        assert.ok(out.equals(a));
        const tail = Buffer.alloc(BS + 10);
        await layer.readData(tail, 5 * BS + 3 * BS - 10);
        assert.ok(tail.subarray(0, 10).equals(Buffer.alloc(10, 0x5a)));
        assert.ok(tail.subarray(10).equals(Buffer.alloc(BS, 1)));
      } finally {
        await layer.close();
      }
    }
  });

  it('is deterministic: the same extents give the same digest', async () => {
    const data = randomBytes(6 * BS);
    const one = await build({}, (w) => w.addData(3, data));
    const two = await build({}, (w) => w.addData(3, data));
    assert.equal(one.digest, two.digest);
    assert.match(one.digest, /^sha256:[0-9a-f]{64}$/);
  });

  it('refuses extents out of order or past the virtual size', async () => {
    const w = await LayerWriter.create(join(dir.path, 'bad.tmp'), { virtualSize: 8 * BS });
    try {
      await w.addData(4, Buffer.alloc(BS));
      await assert.rejects(w.addData(2, Buffer.alloc(BS)), { code: 'INVALID_ARGUMENT' });
      assert.throws(() => w.addZero(7, 2), { code: 'INVALID_ARGUMENT' });
    } finally {
      await w.abort();
    }
  });

  it('detects a tampered chunk and a missing layer', async () => {
    const built = await build({}, (w) => w.addData(0, randomBytes(8 * BS)));
    const store2 = new FsBlobStore(join(dir.path, 'store2'));
    const bytes = await store.getRange(layerKey(built.digest), 0, built.size);
    bytes[200] = (bytes[200] as number) ^ 0xff;
    await store2.put(layerKey(built.digest), bytes);
    const layer = await LayerReader.open(built.digest, { store: withoutLocalPath(store2) });
    try {
      await assert.rejects(layer.readData(Buffer.alloc(10), 0), { code: 'LAYER_CORRUPT' });
    } finally {
      await layer.close();
    }
    const missing = `sha256:${'0'.repeat(64)}`;
    await assert.rejects(LayerReader.open(missing, { store }), { code: 'LAYER_NOT_FOUND' });
  });
});
