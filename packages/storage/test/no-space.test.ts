// A full disk under the storage engine, on a small tmpfs the test mounts:
// guest writes, seals and blob puts fail with STORAGE_NO_SPACE (ENOSPC over
// NBD) instead of crashing or corrupting; data written before stays
// byte-identical, a chunk cache that cannot grow still serves reads (from
// memory), and once space is freed the same device writes and seals
// again and the sealed image holds everything.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { FsBlobStore } from '../src/blob/fs-blob-store.js';
import { ChunkCache } from '../src/cache/chunk-cache.js';
import { ImageDevice } from '../src/image/image-device.js';
import type { ImageSpec } from '../src/image/image-spec.js';
import { NbdServer } from '../src/nbd/nbd-server.js';
import { nbdUnixUri } from '../src/nbd/protocol.js';
import { importRawImage } from '../src/transfer/import-raw.js';
import { Prng } from './helpers/prng.js';
import { run } from './helpers/run.js';
import { mountSmallFs, smallFsSkip, type SmallFs } from '../src/testing/small-fs.js';
import { tempDir, type TempDir } from './helpers/tmp.js';
import { withoutLocalPath } from './helpers/without-local-path.js';

const KiB = 1 << 10;
const MiB = 1 << 20;
const SIZE = 2 * MiB;

function noSpace(err: unknown): boolean {
  assert.ok(err instanceof AenvError, String(err));
  assert.equal(err.code, 'STORAGE_NO_SPACE', err.message);
  return true;
}

describe('a full disk under the storage engine', { skip: smallFsSkip() }, () => {
  let dir: TempDir;
  let fs: SmallFs;
  let store: FsBlobStore;
  let base: Buffer;
  let image: Required<ImageSpec>;

  before(async () => {
    dir = await tempDir();
    fs = await mountSmallFs(join(dir.path, 'mnt'), 24);
    store = new FsBlobStore(join(fs.path, 'blobs'));
    base = new Prng(7).bytes(SIZE);
    await writeFile(join(dir.path, 'base.raw'), base);
    ({ image } = await importRawImage(join(dir.path, 'base.raw'), { store, workDir: dir.path }));
  });

  after(async () => {
    await fs?.remove();
    await dir?.remove();
  });

  it('writes and seals fail with STORAGE_NO_SPACE; nothing is lost; both work once freed', async () => {
    const device = await ImageDevice.open({
      image,
      store,
      upper: { dir: join(fs.path, 'upper'), mode: 'create' },
    });
    const a = new Prng(8).bytes(256 * KiB);
    const b = new Prng(9).bytes(MiB);
    try {
      await device.writeAt(a, 0);
      await device.flush();
      await fs.fill();
      await assert.rejects(device.writeAt(b, MiB), noSpace);
      await assert.rejects(device.seal(), noSpace);
      const back = Buffer.alloc(SIZE);
      await device.readAt(back, 0);
      assert.ok(back.subarray(0, a.length).equals(a), 'acknowledged writes read back');
      assert.ok(back.subarray(a.length).equals(base.subarray(a.length)), 'the base is intact');
      await fs.free();
      await device.writeAt(b, MiB);
      const sealed = await device.seal();
      const child = await ImageDevice.open({ image: sealed.image, store });
      const all = Buffer.alloc(SIZE);
      await child.readAt(all, 0);
      await child.close();
      const want = Buffer.from(base);
      a.copy(want, 0);
      b.copy(want, MiB);
      assert.ok(all.equals(want), 'the sealed image holds every write');
    } finally {
      await fs.free();
      await device.close();
    }
  });

  it('a chunk cache on a full disk still serves every read', async () => {
    const cache = await ChunkCache.open({
      dir: join(fs.path, 'cache'),
      budgetBytes: 4 * MiB,
      slotSize: MiB,
    });
    const device = await ImageDevice.open({ image, store: withoutLocalPath(store), cache });
    try {
      await fs.fill();
      const all = Buffer.alloc(SIZE);
      await device.readAt(all, 0);
      assert.ok(all.equals(base), 'reads are right although nothing could be cached');
      assert.equal(cache.stats().entries, 0, 'nothing was cached');
    } finally {
      await fs.free();
      await device.close();
      await cache.close();
    }
  });

  it('over NBD a write into a full upper is answered ENOSPC and the disk stays readable', async () => {
    const server = await NbdServer.start({ socketDir: join(dir.path, 'nbd') });
    try {
      const socket = await server.addExport('full', {
        image,
        store: { kind: 'fs', root: join(fs.path, 'blobs') },
        upper: { dir: join(fs.path, 'nbd-upper'), mode: 'create' },
      });
      const uri = nbdUnixUri(socket, 'full');
      const io = (...cmds: string[]) =>
        run('qemu-io', ['-f', 'raw', ...cmds.flatMap((c) => ['-c', c]), uri]);
      const first = await io('write -P 0xab 0 64k', 'flush');
      assert.equal(first.code, 0, first.stderr + first.stdout);
      await fs.fill();
      const full = await io(`write -P 0xcd ${MiB} 1M`);
      assert.match(full.stderr + full.stdout, /No space left on device/);
      const read = await io('read -P 0xab 0 64k');
      assert.doesNotMatch(read.stdout, /Pattern verification failed|error/i, read.stdout);
      await fs.free();
      const again = await io(`write -P 0xcd ${MiB} 1M`, `read -P 0xcd ${MiB} 1M`);
      assert.doesNotMatch(again.stdout + again.stderr, /failed|error/i, again.stdout);
      await server.removeExport('full');
    } finally {
      await fs.free();
      await server.close();
    }
  });
});
