// The image device: the block-device contract over a real stack (fs store,
// base layer, upper), plus seal, fork, reopen and prefetch.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FsBlobStore } from '../src/blob/fs-blob-store.js';
import { ChunkCache } from '../src/cache/chunk-cache.js';
import type { WritableDevice } from '../src/device.js';
import { ImageDevice } from '../src/image/image-device.js';
import { inspectLayer } from '../src/layer/inspect-layer.js';
import { runBlockDeviceSuite } from '../src/testing/block-device-suite.js';
import { importRawImage } from '../src/transfer/import-raw.js';
import { tempDir, type TempDir } from './helpers/tmp.js';
import { withoutLocalPath } from './helpers/without-local-path.js';

const BS = 4096;
let root: TempDir;
let n = 0;

before(async () => (root = await tempDir()));
after(async () => root.remove());

async function read(d: WritableDevice, offset: number, length: number): Promise<Buffer> {
  const b = Buffer.alloc(length);
  await d.readAt(b, offset);
  return b;
}

runBlockDeviceSuite({
  name: 'ImageDevice (empty base, fs store)',
  create: async (size) => {
    const dir = join(root.path, `suite-${n++}`);
    const store = new FsBlobStore(join(dir, 'store'));
    return ImageDevice.open({
      image: { virtualSize: size, layers: [] },
      store,
      upper: { dir: join(dir, 'upper') },
    });
  },
});

describe('ImageDevice stacks', () => {
  let dir: string;
  let store: FsBlobStore;
  let base: Buffer;
  let baseDigest: string;

  before(async () => {
    dir = join(root.path, 'stack');
    store = new FsBlobStore(join(dir, 'store'));
    base = randomBytes(256 * BS);
    base.fill(0, 64 * BS, 128 * BS);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'base.raw'), base);
    const imported = await importRawImage(join(dir, 'base.raw'), {
      store,
      workDir: dir,
      chunkSize: 16 * BS,
    });
    baseDigest = imported.digest;
    assert.equal(imported.dataBytes, 192 * BS, 'zero blocks are skipped on import');
  });

  it('reads the base through an empty upper, and keeps the base unchanged under writes', async () => {
    const d = await ImageDevice.open({
      image: { virtualSize: base.length, layers: [baseDigest] },
      store,
      upper: { dir: join(dir, 'u1') },
    });
    try {
      assert.ok((await read(d, 0, base.length)).equals(base));
      await d.writeAt(Buffer.alloc(3 * BS + 5, 0x77), 10 * BS - 2);
      const want = Buffer.from(base);
      want.fill(0x77, 10 * BS - 2, 13 * BS + 3);
      assert.ok((await read(d, 0, base.length)).equals(want));
      const info = await inspectLayer(store, baseDigest);
      assert.equal(info.dataBytes, 192 * BS);
    } finally {
      await d.close();
    }
  });

  it('seals in proportion to the data written, and two children continue from the sealed stack', async () => {
    const d = await ImageDevice.open({
      image: { virtualSize: base.length, layers: [baseDigest] },
      store,
      upper: { dir: join(dir, 'parent') },
    });
    let child: ImageDevice | undefined;
    try {
      await d.writeAt(Buffer.alloc(2 * BS, 1), 0);
      await d.trimAt(100 * BS, 4 * BS);
      const sealed = await d.seal();
      assert.deepEqual(sealed.image.layers, [baseDigest, sealed.digest]);
      const layer = await inspectLayer(store, sealed.digest);
      assert.equal(layer.dataBytes, 2 * BS, 'the layer holds only what was written');
      assert.equal(layer.zeroBytes, 4 * BS, 'trims are kept as zero extents');
      assert.equal(d.stats().upperDataBytes, 0, 'the device continues on a fresh upper');

      child = await ImageDevice.open({
        image: sealed.image,
        store,
        upper: { dir: join(dir, 'child') },
      });
      await d.writeAt(Buffer.alloc(BS, 2), 0);
      await child.writeAt(Buffer.alloc(BS, 3), 0);
      assert.ok(
        (await read(d, 0, 2 * BS)).equals(
          Buffer.concat([Buffer.alloc(BS, 2), Buffer.alloc(BS, 1)]),
        ),
      );
      assert.ok(
        (await read(child, 0, 2 * BS)).equals(
          Buffer.concat([Buffer.alloc(BS, 3), Buffer.alloc(BS, 1)]),
        ),
      );
      assert.ok((await read(child, 100 * BS, 4 * BS)).equals(Buffer.alloc(4 * BS)));
      assert.ok((await read(child, 104 * BS, BS)).equals(base.subarray(104 * BS, 105 * BS)));
    } finally {
      await d.close();
      await child?.close();
    }
  });

  it('reopens an upper with its writes, and refuses it on another stack', async () => {
    const image = { virtualSize: base.length, layers: [baseDigest] };
    const upper = { dir: join(dir, 'reopen') };
    const d = await ImageDevice.open({ image, store, upper });
    await d.writeAt(Buffer.alloc(BS, 9), 5 * BS);
    await d.close();
    const again = await ImageDevice.open({ image, store, upper: { ...upper, mode: 'open' } });
    try {
      assert.ok((await read(again, 5 * BS, BS)).equals(Buffer.alloc(BS, 9)));
    } finally {
      await again.close();
    }
    await assert.rejects(ImageDevice.open({ image: { ...image, layers: [] }, store, upper }), {
      code: 'STORAGE_UPPER_MISMATCH',
    });
  });

  it('read-only devices refuse writes and seals', async () => {
    const d = await ImageDevice.open({
      image: { virtualSize: base.length, layers: [baseDigest] },
      store,
    });
    try {
      assert.equal(d.readOnly, true);
      await assert.rejects(d.writeAt(Buffer.alloc(1), 0), { code: 'STORAGE_READ_ONLY' });
      await assert.rejects(d.seal(), { code: 'STORAGE_READ_ONLY' });
      await d.flush();
    } finally {
      await d.close();
    }
  });

  it('a grown disk reads zeros past the base', async () => {
    const d = await ImageDevice.open({
      image: { virtualSize: base.length * 2, layers: [baseDigest] },
      store,
      upper: { dir: join(dir, 'grown') },
    });
    try {
      assert.ok(
        (await read(d, base.length - 10, 20)).equals(
          Buffer.concat([base.subarray(-10), Buffer.alloc(10)]),
        ),
      );
    } finally {
      await d.close();
    }
  });

  it('prefetch fills the cache for a ranged store, and later reads hit', async () => {
    const cache = await ChunkCache.open({
      dir: join(dir, 'cache'),
      budgetBytes: 1 << 20,
      slotSize: 16 * BS,
    });
    const d = await ImageDevice.open({
      image: { virtualSize: base.length, layers: [baseDigest] },
      store: withoutLocalPath(store),
      cache,
    });
    try {
      await d.prefetch([{ offset: 0, length: 32 * BS }]);
      const before = cache.stats();
      assert.equal(before.misses, 2);
      assert.ok((await read(d, 0, 32 * BS)).equals(base.subarray(0, 32 * BS)));
      assert.equal(cache.stats().misses, 2, 'no new fetch');
      assert.ok(cache.stats().hits >= 2);
    } finally {
      await d.close();
      await cache.close();
    }
  });

  it('a missing layer fails the open with LAYER_NOT_FOUND and leaks no upper', async () => {
    const missing = `sha256:${'1'.repeat(64)}`;
    await assert.rejects(
      ImageDevice.open({
        image: { virtualSize: BS, layers: [baseDigest, missing] },
        store,
        upper: { dir: join(dir, 'never') },
      }),
      { code: 'LAYER_NOT_FOUND' },
    );
    assert.equal(existsSync(join(dir, 'never')), false);
  });
});
