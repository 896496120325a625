// A blob store that is down, against a real S3-compatible server (s3rver on
// loopback) behind a forwarder that can cut the connection: requests fail
// fast with BLOB_STORE_UNAVAILABLE naming the store, retries are bounded, a
// black-holed store times out within the configured bounds, layers whose
// header, index and chunks are cached still open and read during the outage,
// and everything works again once the store is back, without a new client.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { S3BlobStore } from '../src/blob/s3-blob-store.js';
import { ChunkCache } from '../src/cache/chunk-cache.js';
import { ImageDevice } from '../src/image/image-device.js';
import type { ImageSpec } from '../src/image/image-spec.js';
import { importRawImage } from '../src/transfer/import-raw.js';
import {
  startOutageProxy,
  startSilentServer,
  type OutageProxy,
} from '../src/testing/outage-proxy.js';
import { Prng } from './helpers/prng.js';
import { S3_BUCKET, S3_CREDENTIALS, startS3Server, type S3Server } from './helpers/s3-server.js';
import { tempDir, type TempDir } from './helpers/tmp.js';

const MiB = 1 << 20;
const SIZE = 4 * MiB;
const CHUNK = 256 << 10;

function isUnavailable(err: unknown): boolean {
  assert.ok(err instanceof AenvError, String(err));
  assert.equal(err.code, 'BLOB_STORE_UNAVAILABLE');
  assert.match(err.message, /s3:\/\/aenv-test\//, 'the message names the store');
  return true;
}

async function timed(fn: () => Promise<unknown>): Promise<[unknown, number]> {
  const t0 = Date.now();
  try {
    return [await fn(), Date.now() - t0];
  } catch (err) {
    return [err, Date.now() - t0];
  }
}

describe('S3 blob store outages', () => {
  let dir: TempDir;
  let s3: S3Server;
  let proxy: OutageProxy;
  let store: S3BlobStore;
  const images: { raw: Buffer; image: Required<ImageSpec> }[] = [];

  before(async () => {
    dir = await tempDir();
    s3 = await startS3Server();
    proxy = await startOutageProxy(s3.endpoint);
    store = new S3BlobStore({
      bucket: S3_BUCKET,
      prefix: 'outage/',
      endpoint: proxy.endpoint,
      credentials: S3_CREDENTIALS,
    });
    for (const seed of [1, 2]) {
      const raw = new Prng(seed).bytes(SIZE);
      const path = join(dir.path, `base-${seed}.raw`);
      await writeFile(path, raw);
      const { image } = await importRawImage(path, { store, workDir: dir.path, chunkSize: CHUNK });
      images.push({ raw, image });
    }
  });

  after(async () => {
    await store?.close();
    await proxy?.stop();
    await s3?.stop();
    await dir?.remove();
  });

  it('a refused connection fails fast, naming the store', async () => {
    await proxy.down();
    try {
      const [err, ms] = await timed(() => store.getRange('probe', 0, 1));
      assert.ok(isUnavailable(err));
      assert.ok(ms < 5000, `took ${ms} ms`);
    } finally {
      await proxy.up();
    }
  });

  it('a black-holed store times out within its bounds, with bounded retries', async () => {
    const silent = await startSilentServer();
    const stuck = new S3BlobStore({
      bucket: S3_BUCKET,
      endpoint: silent.endpoint,
      credentials: S3_CREDENTIALS,
      idleTimeoutMs: 300,
      maxAttempts: 2,
    });
    try {
      const [err, ms] = await timed(() => stuck.head('probe'));
      assert.ok(isUnavailable(err));
      assert.ok(ms < 3000, `took ${ms} ms`);
      assert.ok(silent.connections() <= 2, `${silent.connections()} connections for 2 attempts`);
    } finally {
      await stuck.close();
      await silent.stop();
    }
  });

  it('cached layers open and read during an outage; uncached ones fail fast; all recover', async () => {
    const [cached, uncached] = images as [(typeof images)[0], (typeof images)[0]];
    const cache = await ChunkCache.open({
      dir: join(dir.path, 'cache'),
      budgetBytes: 8 * MiB,
      slotSize: CHUNK,
    });
    try {
      const warm = await ImageDevice.open({ image: cached.image, store, cache });
      const half = Buffer.alloc(SIZE / 2);
      await warm.readAt(half, 0);
      await warm.close();
      await proxy.down();
      try {
        const during = await ImageDevice.open({ image: cached.image, store, cache });
        const again = Buffer.alloc(SIZE / 2);
        await during.readAt(again, 0);
        assert.ok(again.equals(cached.raw.subarray(0, SIZE / 2)), 'cached bytes read back');
        const [readErr, readMs] = await timed(() => during.readAt(Buffer.alloc(4096), SIZE - 4096));
        assert.ok(isUnavailable(readErr), 'an uncached chunk cannot be read');
        assert.ok(readMs < 5000, `read took ${readMs} ms`);
        await during.close();
        const [openErr, openMs] = await timed(() =>
          ImageDevice.open({ image: uncached.image, store, cache }),
        );
        assert.ok(isUnavailable(openErr), 'an uncached layer cannot be opened');
        assert.ok(openMs < 5000, `open took ${openMs} ms`);
      } finally {
        await proxy.up();
      }
      const after = await ImageDevice.open({ image: uncached.image, store, cache });
      const all = Buffer.alloc(SIZE);
      await after.readAt(all, 0);
      assert.ok(all.equals(uncached.raw), 'the store is used again once it is back');
      await after.close();
    } finally {
      await cache.close();
    }
  });
});
