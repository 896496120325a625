// Lazy loading from a real S3-compatible server (s3rver on loopback)
// through the chunk cache: what opening and reading fetch, shared fetches,
// and random reads with a cache of a quarter of the image (reads correct,
// evictions counted, budget never exceeded), then the same stack served to
// qemu-img over NBD straight from S3.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { S3BlobStore } from '../src/blob/s3-blob-store.js';
import { ChunkCache } from '../src/cache/chunk-cache.js';
import { STORAGE_CHANNELS } from '../src/events.js';
import { ImageDevice } from '../src/image/image-device.js';
import type { ImageSpec } from '../src/image/image-spec.js';
import { NbdServer } from '../src/nbd/nbd-server.js';
import { nbdUnixUri } from '../src/nbd/protocol.js';
import { importRawImage } from '../src/transfer/import-raw.js';
import { countingStore } from './helpers/counting-store.js';
import { Prng } from './helpers/prng.js';
import { run } from './helpers/run.js';
import { S3_BUCKET, S3_CREDENTIALS, startS3Server, type S3Server } from './helpers/s3-server.js';
import { tempDir, type TempDir } from './helpers/tmp.js';

const MiB = 1 << 20;
const SIZE = 16 * MiB;
const CHUNK = 256 << 10;

describe('lazy loading from S3 through a bounded cache', () => {
  let dir: TempDir;
  let s3: S3Server;
  let store: S3BlobStore;
  let raw: Buffer;
  let image: Required<ImageSpec>;
  const storeSpec = () => ({
    kind: 's3' as const,
    bucket: S3_BUCKET,
    prefix: 'lazy/',
    endpoint: s3.endpoint,
    credentials: S3_CREDENTIALS,
  });

  before(async () => {
    dir = await tempDir();
    s3 = await startS3Server();
    store = new S3BlobStore(storeSpec());
    const rng = new Prng(5);
    raw = Buffer.alloc(SIZE);
    for (let c = 0; c < SIZE / CHUNK; c++) if (c % 8 !== 3) rng.bytes(CHUNK).copy(raw, c * CHUNK);
    await writeFile(join(dir.path, 'base.raw'), raw);
    ({ image } = await importRawImage(join(dir.path, 'base.raw'), {
      store,
      workDir: dir.path,
      chunkSize: CHUNK,
      compression: 'deflate',
    }));
  });

  after(async () => {
    await store?.close();
    await s3?.stop();
    await dir?.remove();
  });

  it('opening fetches header and index only; a read fetches one chunk, once', async () => {
    const counted = countingStore(new S3BlobStore(storeSpec()));
    const cache = await ChunkCache.open({
      dir: join(dir.path, 'c1'),
      budgetBytes: 4 * MiB,
      slotSize: CHUNK,
    });
    const device = await ImageDevice.open({ image, store: counted, cache });
    try {
      assert.equal(counted.ranges.length, 2, 'header + index');
      const reads = Array.from({ length: 8 }, async (_, i) => {
        const b = Buffer.alloc(4096);
        await device.readAt(b, 10 * CHUNK + i * 4096);
        return b;
      });
      const blocks = await Promise.all(reads);
      blocks.forEach((b, i) =>
        assert.ok(b.equals(raw.subarray(10 * CHUNK + i * 4096, 10 * CHUNK + (i + 1) * 4096))),
      );
      assert.equal(counted.ranges.length, 3, 'eight concurrent reads of one chunk fetch it once');
      const s = cache.stats();
      assert.equal(s.misses, 1);
      assert.equal(s.sharedFetches, 7);
      assert.equal(s.bytesFetched, counted.ranges[2]?.length);
    } finally {
      await device.close();
      await cache.close();
      await counted.close();
    }
  });

  it('random reads with a cache of a quarter of the image stay correct and within budget', async () => {
    const budget = SIZE / 4;
    const cache = await ChunkCache.open({
      dir: join(dir.path, 'c2'),
      budgetBytes: budget,
      slotSize: CHUNK,
    });
    const device = await ImageDevice.open({ image, store, cache });
    let fetchEvents = 0;
    const onFetch = () => (fetchEvents += 1);
    subscribe(STORAGE_CHANNELS.fetch, onFetch);
    try {
      const rng = new Prng(9);
      for (let round = 0; round < 60; round++) {
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            const length = rng.int(1, 300_000);
            const offset = rng.int(0, SIZE - length);
            const b = Buffer.alloc(length);
            await device.readAt(b, offset);
            assert.ok(
              b.equals(raw.subarray(offset, offset + length)),
              `bytes at ${offset}+${length}`,
            );
          }),
        );
        const s = cache.stats();
        assert.ok(s.usedBytes <= budget, `round ${round}: ${s.usedBytes} bytes cached`);
      }
      const s = cache.stats();
      assert.ok(s.evictions > 0, 'evictions are counted');
      assert.ok(s.hits > 0 && s.misses > 0);
      assert.ok(s.peakBytes <= budget);
      assert.equal(fetchEvents, s.misses, 'one fetch event per miss');
      const slab = await stat(join(dir.path, 'c2', 'chunks.slab'));
      assert.ok(slab.blocks * 512 <= budget, 'the slab stays within budget on disk');
      console.log(
        `cache 1/4 of image: ${s.hits} hits, ${s.misses} misses, ${s.evictions} evictions, ` +
          `${(s.bytesFetched / MiB).toFixed(1)} MiB fetched, peak ${(s.peakBytes / MiB).toFixed(1)} MiB`,
      );
    } finally {
      unsubscribe(STORAGE_CHANNELS.fetch, onFetch);
      await device.close();
      await cache.close();
    }
  });

  it('qemu-img reads a stack served over NBD straight from S3', async () => {
    const server = await NbdServer.start({ socketDir: join(dir.path, 'sock') });
    try {
      const socket = await server.addExport('s3disk', {
        image,
        store: storeSpec(),
        upper: { dir: join(dir.path, 'upper') },
        cache: { dir: join(dir.path, 'c3'), budgetBytes: SIZE / 4, slotSize: CHUNK },
      });
      const r = await run('qemu-img', [
        'compare',
        '-f',
        'raw',
        '-F',
        'raw',
        join(dir.path, 'base.raw'),
        nbdUnixUri(socket, 's3disk'),
      ]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const stats = await server.stats();
      const cache = Object.values(stats.caches)[0];
      assert.ok(cache !== undefined && cache.misses > 0 && cache.peakBytes <= SIZE / 4);
    } finally {
      await server.close();
    }
  });
});
