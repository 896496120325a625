import assert from 'node:assert/strict';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, type TempDir } from '../../test/helpers/tmp.js';
import { ChunkCache } from './chunk-cache.js';

const SLOT = 4096;
const chunk = (i: number) => Buffer.alloc(SLOT, i & 0xff);
const loader = (i: number, calls: number[]) => async () => {
  calls.push(i);
  await new Promise((r) => setTimeout(r, 2));
  return { plain: chunk(i), fetchedBytes: 100 };
};

describe('ChunkCache', () => {
  let dir: TempDir;
  before(async () => (dir = await tempDir()));
  after(async () => dir.remove());

  it('serves misses through the loader, then hits from the slab', async () => {
    const cache = await ChunkCache.open({
      dir: join(dir.path, 'a'),
      budgetBytes: 4 * SLOT,
      slotSize: SLOT,
    });
    try {
      const calls: number[] = [];
      const out = Buffer.alloc(10);
      await cache.read('k1', out, 100, loader(1, calls));
      assert.ok(out.equals(Buffer.alloc(10, 1)));
      await cache.read('k1', out, 0, loader(1, calls));
      assert.deepEqual(calls, [1]);
      const s = cache.stats();
      assert.deepEqual([s.hits, s.misses, s.bytesFetched, s.usedBytes], [1, 1, 100, SLOT]);
    } finally {
      await cache.close();
    }
  });

  it('shares one fetch among concurrent readers of a chunk', async () => {
    const cache = await ChunkCache.open({
      dir: join(dir.path, 'b'),
      budgetBytes: 4 * SLOT,
      slotSize: SLOT,
    });
    try {
      const calls: number[] = [];
      await Promise.all(
        Array.from({ length: 5 }, () => cache.read('k', Buffer.alloc(1), 0, loader(7, calls))),
      );
      assert.deepEqual(calls, [7]);
      assert.equal(cache.stats().sharedFetches, 4);
    } finally {
      await cache.close();
    }
  });

  it('evicts the least recently used chunk and never exceeds its budget', async () => {
    const cache = await ChunkCache.open({
      dir: join(dir.path, 'c'),
      budgetBytes: 3 * SLOT + 100,
      slotSize: SLOT,
    });
    try {
      const calls: number[] = [];
      const read = async (i: number) => {
        const b = Buffer.alloc(SLOT);
        await cache.read(`k${i}`, b, 0, loader(i, calls));
        assert.ok(b.equals(chunk(i)), `chunk ${i} reads correctly`);
      };
      for (const i of [1, 2, 3, 1, 4, 5, 1, 2]) await read(i);
      // 1 stays hot; 2 and 3 are evicted by 4 and 5; 2 is fetched again.
      assert.deepEqual(calls, [1, 2, 3, 4, 5, 2]);
      const s = cache.stats();
      assert.equal(s.evictions, 3);
      assert.ok(s.peakBytes <= s.budgetBytes);
      const slab = await stat(join(dir.path, 'c', 'chunks.slab'));
      assert.ok(slab.blocks * 512 <= s.budgetBytes, 'the slab file stays within budget on disk');
    } finally {
      await cache.close();
    }
  });

  it('serves from memory without caching when no slot is free', async () => {
    const cache = await ChunkCache.open({
      dir: join(dir.path, 'd'),
      budgetBytes: SLOT,
      slotSize: SLOT,
    });
    try {
      const big = () => Promise.resolve({ plain: Buffer.alloc(2 * SLOT, 9), fetchedBytes: 1 });
      const out = Buffer.alloc(4);
      await cache.read('big', out, SLOT, big);
      assert.ok(out.equals(Buffer.alloc(4, 9)));
      assert.equal(cache.stats().bypasses, 1);
      assert.equal(cache.stats().usedBytes, 0);
    } finally {
      await cache.close();
    }
  });

  it('refuses a directory another live cache holds', async () => {
    const d = join(dir.path, 'e');
    const cache = await ChunkCache.open({ dir: d, budgetBytes: SLOT, slotSize: SLOT });
    try {
      await assert.rejects(ChunkCache.open({ dir: d, budgetBytes: SLOT }), {
        code: 'STORAGE_CACHE_LOCKED',
      });
    } finally {
      await cache.close();
    }
    const again = await ChunkCache.open({ dir: d, budgetBytes: SLOT });
    await again.close();
  });

  it('takes over a lock whose pid now belongs to another process (a recycled pid)', async () => {
    const d = join(dir.path, 'e2');
    await mkdir(d, { recursive: true });
    // pid 1 is alive, but it did not start at "tick 1": a dead holder's recycled pid.
    await writeFile(join(d, 'lock'), '1 1');
    const cache = await ChunkCache.open({ dir: d, budgetBytes: SLOT, slotSize: SLOT });
    await cache.close();
    // A holder recorded without its start time (an older lock) still counts while its pid lives.
    await writeFile(join(d, 'lock'), '1');
    await assert.rejects(ChunkCache.open({ dir: d, budgetBytes: SLOT }), {
      code: 'STORAGE_CACHE_LOCKED',
    });
  });

  it('propagates loader failures to every waiter and forgets them', async () => {
    const cache = await ChunkCache.open({
      dir: join(dir.path, 'f'),
      budgetBytes: SLOT,
      slotSize: SLOT,
    });
    try {
      const fail = () => Promise.reject(new Error('store down'));
      await assert.rejects(
        Promise.all([
          cache.read('x', Buffer.alloc(1), 0, fail),
          cache.read('x', Buffer.alloc(1), 0, fail),
        ]),
        /store down/,
      );
      const calls: number[] = [];
      await cache.read('x', Buffer.alloc(1), 0, loader(3, calls));
      assert.deepEqual(calls, [3]);
    } finally {
      await cache.close();
    }
  });
});
