// Property test: random reads, writes (aligned and not), zeroes, trims,
// flushes, seals, forks and reopens on an image device, checked after every
// step against a flat in-memory model. Runs over a local store (direct
// reads) and over a ranged store with a small chunk cache (lazy fetches,
// evictions, compressed chunks). A failure prints its seed; replay it with
// AENV_TEST_SEED=<seed>.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BlobStore } from '../src/blob/blob-store.js';
import { FsBlobStore } from '../src/blob/fs-blob-store.js';
import { ChunkCache } from '../src/cache/chunk-cache.js';
import { ImageDevice } from '../src/image/image-device.js';
import type { ImageSpec } from '../src/image/image-spec.js';
import { MemoryDevice } from '../src/testing/memory-device.js';
import { importRawImage } from '../src/transfer/import-raw.js';
import { Prng } from './helpers/prng.js';
import { tempDir, type TempDir } from './helpers/tmp.js';
import { withoutLocalPath } from './helpers/without-local-path.js';

const BS = 4096;
const SIZE = 512 * BS + 1536; // not a whole number of blocks
const STEPS = Number(process.env.AENV_PROPERTY_STEPS ?? 400);

interface World {
  readonly rng: Prng;
  readonly store: BlobStore;
  readonly cache: ChunkCache | undefined;
  readonly dir: string;
  device: ImageDevice;
  model: MemoryDevice;
  uppers: number;
}

function randomRange(rng: Prng, max = 20 * BS): [number, number] {
  const aligned = rng.next() < 0.5;
  let length = aligned ? rng.int(1, max / BS) * BS : rng.int(1, max);
  let offset = aligned ? rng.int(0, Math.floor(SIZE / BS)) * BS : rng.int(0, SIZE);
  if (rng.next() < 0.05) offset = SIZE - rng.int(1, 3 * BS);
  length = Math.min(length, SIZE - offset);
  return [offset, length];
}

/** One mutation, applied to device and model in the same order. */
function mutation(w: World): [Promise<void>, Promise<void>] {
  const [offset, length] = randomRange(w.rng);
  const kind = w.rng.next();
  if (kind < 0.7) {
    const data = w.rng.bytes(length);
    return [w.device.writeAt(data, offset), w.model.writeAt(data, offset)];
  }
  if (kind < 0.85)
    return [w.device.writeZeroesAt(offset, length), w.model.writeZeroesAt(offset, length)];
  return [w.device.trimAt(offset, length), w.model.trimAt(offset, length)];
}

async function checkRange(w: World, offset: number, length: number, step: string): Promise<void> {
  const got = Buffer.alloc(length);
  await w.device.readAt(got, offset);
  const want = w.model.bytes.subarray(offset, offset + length);
  if (!got.equals(want)) {
    let i = 0;
    while (got[i] === want[i]) i++;
    assert.fail(
      `seed ${w.rng.seed}, ${step}: byte ${offset + i} is ${got[i]}, model says ${want[i]}`,
    );
  }
}

async function fork(w: World, image: Required<ImageSpec>, step: string): Promise<void> {
  const child = await ImageDevice.open({
    image,
    store: w.store,
    cache: w.cache,
    upper: { dir: join(w.dir, `child-${w.uppers++}`), mode: 'create' },
  });
  const childModel = new MemoryDevice(SIZE, BS, w.model.bytes);
  try {
    const childWorld = { ...w, device: child, model: childModel };
    for (let i = 0; i < 5; i++) await Promise.all(mutation(childWorld));
    await checkRange(childWorld, 0, SIZE, `${step} (child)`);
  } finally {
    await child.close();
  }
}

async function step(w: World, i: number): Promise<void> {
  const r = w.rng.next();
  const name = `step ${i}`;
  if (r < 0.55) {
    await Promise.all(mutation(w));
  } else if (r < 0.65) {
    const batch = Array.from({ length: w.rng.int(2, 6) }, () => mutation(w));
    await Promise.all(batch.flat());
  } else if (r < 0.9) {
    const [offset, length] = randomRange(w.rng, 64 * BS);
    await checkRange(w, offset, length, name);
  } else if (r < 0.94) {
    await w.device.flush();
  } else if (r < 0.97) {
    const sealed = await w.device.seal({
      compression: w.rng.pick(['none', 'deflate'] as const),
      chunkSize: w.rng.pick([4, 16, 64]) * BS,
    });
    await checkRange(w, 0, SIZE, `${name} (after seal)`);
    if (w.rng.next() < 0.5) await fork(w, sealed.image, name);
  } else {
    const image = w.device.image;
    await w.device.close();
    w.device = await ImageDevice.open({
      image,
      store: w.store,
      cache: w.cache,
      upper: { dir: join(w.dir, 'upper'), mode: 'open' },
    });
  }
}

async function run(dir: string, store: BlobStore, cache: ChunkCache | undefined, seed?: number) {
  const rng = new Prng(seed);
  const raw = rng.bytes(SIZE);
  for (let b = 0; b < SIZE / BS; b += rng.int(1, 8))
    raw.fill(0, b * BS, Math.min((b + 1) * BS, SIZE));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'base.raw'), raw);
  const { image } = await importRawImage(join(dir, 'base.raw'), {
    store,
    workDir: dir,
    chunkSize: 8 * BS,
    compression: 'deflate',
  });
  const w: World = {
    rng,
    store,
    cache,
    dir,
    device: await ImageDevice.open({ image, store, cache, upper: { dir: join(dir, 'upper') } }),
    model: new MemoryDevice(SIZE, BS, raw),
    uppers: 0,
  };
  try {
    for (let i = 0; i < STEPS; i++) await step(w, i);
    await checkRange(w, 0, SIZE, 'final');
  } finally {
    await w.device.close();
  }
  return w;
}

describe('image device against a flat model', () => {
  let root: TempDir;
  before(async () => (root = await tempDir()));
  after(async () => root.remove());

  it('over a local store', async () => {
    const dir = join(root.path, 'local');
    await run(dir, new FsBlobStore(join(dir, 'store')), undefined);
  });

  it('over a ranged store through a small chunk cache', async () => {
    const dir = join(root.path, 'ranged');
    const cache = await ChunkCache.open({
      dir: join(dir, 'cache'),
      budgetBytes: 24 * BS,
      slotSize: 8 * BS,
    });
    try {
      await run(dir, withoutLocalPath(new FsBlobStore(join(dir, 'store'))), cache);
      const s = cache.stats();
      assert.ok(s.evictions > 0, 'the cache evicted');
      assert.ok(s.peakBytes <= s.budgetBytes, 'the cache stayed within budget');
    } finally {
      await cache.close();
    }
  });
});
