// A host's chunk caches with and without `keepCaches`: kept, a cache stays
// open (and warm) after its last export goes, so the next export of the same
// layers fetches nothing; not kept, it closes with its last export. Either
// way `close()` releases every cache (slab and lock file gone).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { FsBlobStore } from '../src/blob/fs-blob-store.js';
import type { ImageSpec } from '../src/image/image-spec.js';
import { NbdHost, type ExportSpec } from '../src/nbd/nbd-host.js';
import { importRawImage } from '../src/transfer/import-raw.js';
import { Prng } from './helpers/prng.js';
import { tempDir, type TempDir } from './helpers/tmp.js';

const MiB = 1 << 20;
const SIZE = 4 * MiB;
const CHUNK = 256 << 10;

describe('NbdHost keepCaches', () => {
  let dir: TempDir;
  let image: Required<ImageSpec>;
  const spec = (): ExportSpec => ({
    image,
    store: { kind: 'fs', root: join(dir.path, 'store') },
    cache: { dir: join(dir.path, 'cache'), budgetBytes: SIZE, slotSize: CHUNK },
    prefetch: [{ offset: 0, length: SIZE }],
  });

  before(async () => {
    dir = await tempDir();
    // Half-random blocks: no block is zero, every chunk deflates, and
    // compressed chunks go through the cache even from a local store.
    const raw = Buffer.alloc(SIZE);
    const rng = new Prng(11);
    for (let o = 0; o < SIZE; o += 4096) rng.bytes(2048).copy(raw, o);
    await writeFile(join(dir.path, 'base.raw'), raw);
    ({ image } = await importRawImage(join(dir.path, 'base.raw'), {
      store: new FsBlobStore(join(dir.path, 'store')),
      workDir: dir.path,
      chunkSize: CHUNK,
      compression: 'deflate',
    }));
  });

  after(async () => {
    await dir?.remove();
  });

  async function cached(host: NbdHost, entries: number) {
    for (let i = 0; i < 500; i++) {
      const c = Object.values(host.stats().caches)[0];
      if (c !== undefined && c.entries >= entries) return c;
      await sleep(10);
    }
    throw new Error('prefetch never filled the cache');
  }

  it('keeps a warm cache across exports until the host closes', async () => {
    const host = new NbdHost({ socketDir: join(dir.path, 'sock-keep'), keepCaches: true });
    try {
      await host.addExport('first', spec());
      const warm = await cached(host, SIZE / CHUNK);
      assert.equal(warm.misses, SIZE / CHUNK);
      await host.removeExport('first');
      assert.equal(Object.values(host.stats().caches)[0]?.entries, SIZE / CHUNK, 'still cached');
      await host.addExport('second', spec());
      await sleep(50);
      const again = await cached(host, SIZE / CHUNK);
      assert.equal(again.bytesFetched, warm.bytesFetched, 'the second export fetched nothing');
    } finally {
      await host.close();
    }
    assert.deepEqual(host.stats().caches, {});
    assert.equal(existsSync(join(dir.path, 'cache', 'lock')), false, 'cache released on close');
    assert.equal(existsSync(join(dir.path, 'cache', 'chunks.slab')), false);
  });

  it('closes a cache with its last export by default', async () => {
    const host = new NbdHost({ socketDir: join(dir.path, 'sock-drop') });
    try {
      await host.addExport('only', spec());
      await cached(host, SIZE / CHUNK);
      await host.removeExport('only');
      assert.deepEqual(host.stats().caches, {});
      assert.equal(existsSync(join(dir.path, 'cache', 'lock')), false);
    } finally {
      await host.close();
    }
  });
});
