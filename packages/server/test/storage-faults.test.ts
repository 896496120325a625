// The node's storage engine under storage faults, with real pieces (NBD
// worker, qemu-io as the guest's disk driver, a real S3 server):
// - a full disk under $AENV_HOME (a small tmpfs this test mounts): a new
//   sandbox disk fails with STORAGE_NO_SPACE leaving no export and no upper;
//   sealing a served disk (pause, snapshot) fails with STORAGE_NO_SPACE while
//   the disk keeps serving its data, and succeeds once space is freed;
// - the S3 blob store down (s3rver behind a forwarder the test cuts): disks
//   of cached layers still open and read, an uncached layer fails fast with
//   BLOB_STORE_UNAVAILABLE leaving nothing, sealing a served disk fails the
//   same way while the disk keeps working, and all of it works again once
//   the store is back, with no restart.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import S3rver from 's3rver';
import { AenvError, loadConfig } from '@aenv/shared';
import {
  S3BlobStore,
  importRawImage,
  nbdUnixUri,
  resolveStorageSettings,
  storageConfigSchema,
  type ImageSpec,
} from '@aenv/storage';
import {
  mountSmallFs,
  smallFsSkip,
  startOutageProxy,
  type OutageProxy,
  type SmallFs,
} from '@aenv/storage/testing';
import { NodeStorage, UPPER_DIR_NAME } from '../src/storage/node-storage.js';
import type { EngineDisk } from '../src/storage/sandbox-disk.js';
import { runQemuIo, qemuMissing } from './storage-helpers.js';

const MiB = 1 << 20;
const SIZE = 8 * MiB;
const BUCKET = 'aenv-faults';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const uriOf = (disk: EngineDisk) =>
  disk.source.kind === 'nbd' ? nbdUnixUri(disk.source.socket, disk.source.export) : '';

function hasCode(code: string): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof AenvError, String(err));
    assert.equal(err.code, code, err.message);
    return true;
  };
}

async function rawImage(dir: string, name: string, fill: number): Promise<string> {
  const path = join(dir, name);
  const bytes = Buffer.alloc(SIZE);
  for (let m = 0; m < SIZE / MiB; m += 2) bytes.fill(fill + m, m * MiB, (m + 1) * MiB);
  await writeFile(path, bytes);
  return path;
}

/** Opens a disk of `image` for sandbox `id` in `home/sandboxes/id`. */
async function openDisk(storage: NodeStorage, home: string, id: string, image: ImageSpec) {
  const dir = join(home, 'sandboxes', id);
  await mkdir(dir, { recursive: true });
  return storage.openImage({ name: id, image, upperDir: join(dir, UPPER_DIR_NAME) });
}

async function assertNoDisk(storage: NodeStorage, home: string, id: string): Promise<void> {
  assert.equal(storage.disk(id), undefined, 'no disk is registered');
  assert.equal((await storage.stats()).exports[id], undefined, 'no export is served');
  assert.equal(existsSync(join(home, 'sandboxes', id, UPPER_DIR_NAME)), false, 'no upper is left');
  assert.equal(existsSync(join(home, 'nbd', `${id}.sock`)), false, 'no socket is left');
}

describe('node storage on a full disk', { skip: qemuMissing ?? smallFsSkip() }, () => {
  let work: string;
  let fs: SmallFs;
  let storage: NodeStorage;
  let base: ImageSpec;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'aenv-storage-faults-'));
    fs = await mountSmallFs(join(work, 'home'), 64);
    const settings = resolveStorageSettings(
      loadConfig(storageConfigSchema, { env: { AENV_STORAGE_CACHE_MIB: '16' } }),
      fs.path,
    );
    storage = await NodeStorage.start({ home: fs.path, settings });
    base = (await storage.importBaseImage(await rawImage(work, 'base.raw', 1))).image;
  });

  after(async () => {
    await storage?.close();
    await fs?.remove();
    await rm(work, { recursive: true, force: true });
  });

  it('new disks and seals fail with STORAGE_NO_SPACE; served data survives; freed space heals', async () => {
    const disk = await openDisk(storage, fs.path, 'running', base);
    try {
      await runQemuIo(uriOf(disk), ['write -P 0xa1 1M 256k', 'flush']);
      await fs.fill();
      await assert.rejects(
        openDisk(storage, fs.path, 'newcomer', base),
        hasCode('STORAGE_NO_SPACE'),
      );
      await assertNoDisk(storage, fs.path, 'newcomer');
      await assert.rejects(disk.seal(), hasCode('STORAGE_NO_SPACE'));
      await runQemuIo(uriOf(disk), ['read -P 0xa1 1M 256k', 'read -P 1 0 1M']);
      await fs.free();
      const sealed = await disk.seal();
      assert.equal(sealed.image.layers.length, 2);
      await runQemuIo(uriOf(disk), ['read -P 0xa1 1M 256k', 'write -P 0xb2 2M 64k']);
      const child = await openDisk(storage, fs.path, 'child', sealed.image);
      await runQemuIo(uriOf(child), ['read -P 0xa1 1M 256k', 'read -P 3 2M 64k']);
      await child.close();
    } finally {
      await fs.free();
      await disk.close();
    }
  });
});

describe('node storage with its S3 blob store down', { skip: qemuMissing }, () => {
  let work: string;
  let s3: S3rver;
  let proxy: OutageProxy;
  let storage: NodeStorage;
  let base: ImageSpec;
  let uncached: ImageSpec;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'aenv-storage-faults-'));
    await mkdir(join(work, 's3'));
    s3 = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: join(work, 's3'),
      configureBuckets: [{ name: BUCKET, configs: [] }],
    });
    const { port } = await s3.run();
    proxy = await startOutageProxy(`http://127.0.0.1:${port}`);
    const env = {
      AENV_STORAGE_BLOB_STORE: 's3',
      AENV_STORAGE_S3_BUCKET: BUCKET,
      AENV_STORAGE_S3_ENDPOINT: proxy.endpoint,
      AENV_STORAGE_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AENV_STORAGE_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AENV_STORAGE_CACHE_MIB: '32',
    };
    const home = join(work, 'home');
    const settings = resolveStorageSettings(loadConfig(storageConfigSchema, { env }), home);
    storage = await NodeStorage.start({ home, settings });
    base = (await storage.importBaseImage(await rawImage(work, 'base.raw', 1))).image;
    // A layer this node has never opened: nothing of it is cached.
    const other = new S3BlobStore({
      bucket: BUCKET,
      endpoint: proxy.endpoint,
      credentials: CREDENTIALS,
    });
    try {
      const raw = await rawImage(work, 'other.raw', 7);
      uncached = (await importRawImage(raw, { store: other, workDir: work })).image;
    } finally {
      await other.close();
    }
  });

  after(async () => {
    await storage?.close();
    await proxy?.stop();
    const http = (s3 as unknown as { httpServer?: { closeAllConnections(): void } })?.httpServer;
    http?.closeAllConnections();
    await s3?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('cached disks open and serve; uncached ones and seals fail fast; all recover', async () => {
    const home = join(work, 'home');
    const running = await openDisk(storage, home, 'running', base);
    try {
      await runQemuIo(uriOf(running), ['read -P 1 0 1M', 'write -P 0xc3 1M 64k', 'flush']);
      await proxy.down();
      try {
        const second = await openDisk(storage, home, 'cached', base);
        await runQemuIo(uriOf(second), ['read -P 1 0 1M']);
        await second.close();
        const t0 = Date.now();
        await assert.rejects(
          openDisk(storage, home, 'uncached', uncached),
          hasCode('BLOB_STORE_UNAVAILABLE'),
        );
        assert.ok(Date.now() - t0 < 5000, `failed after ${Date.now() - t0} ms`);
        await assertNoDisk(storage, home, 'uncached');
        await assert.rejects(running.seal(), hasCode('BLOB_STORE_UNAVAILABLE'));
        await runQemuIo(uriOf(running), ['read -P 0xc3 1M 64k', 'write -P 0xd4 3M 64k']);
      } finally {
        await proxy.up();
      }
      const back = await openDisk(storage, home, 'uncached', uncached);
      await runQemuIo(uriOf(back), ['read -P 7 0 1M']);
      await back.close();
      const sealed = await running.seal();
      assert.equal(sealed.image.layers.length, 2, 'the seal works once the store is back');
      await runQemuIo(uriOf(running), ['read -P 0xc3 1M 64k', 'read -P 0xd4 3M 64k']);
    } finally {
      await running.close();
    }
  });
});
