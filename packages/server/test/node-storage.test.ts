// The node's storage engine with real pieces: a directory blob store, the
// NBD server in its worker thread, and QEMU's own NBD client (qemu-io) as
// the guest stand-in's disk driver. Covers the base image imported once
// (and again when its layer vanished), a sandbox disk served from the
// template's image with its upper in the sandbox directory, seal-and-continue
// (the sealed stack, read back without the upper, holds what was written),
// close deleting the upper, failures leaving nothing, and what a SIGKILLed
// daemon leaves being removed by the next start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { AenvError, loadConfig } from '@aenv/shared';
import {
  FsBlobStore,
  ImageDevice,
  layerKey,
  nbdUnixUri,
  resolveStorageSettings,
  storageConfigSchema,
  type ImageSpec,
  type StorageSettings,
} from '@aenv/storage';
import { removeLeftoverSandboxes } from '../src/orchestrator/leftover-sandboxes.js';
import { NodeStorage, UPPER_DIR_NAME } from '../src/storage/node-storage.js';
import type { EngineDisk } from '../src/storage/sandbox-disk.js';
import { runQemuIo, qemuMissing } from './storage-helpers.js';

const MiB = 1 << 20;
const SIZE = 16 * MiB;

describe('NodeStorage', { skip: qemuMissing }, () => {
  let work: string;
  let raw: string;
  const settingsOf = (home: string): StorageSettings =>
    resolveStorageSettings(
      loadConfig(storageConfigSchema, { env: { AENV_STORAGE_CACHE_MIB: '64' } }),
      home,
    );
  const uriOf = (disk: EngineDisk) =>
    disk.source.kind === 'nbd' ? nbdUnixUri(disk.source.socket, disk.source.export) : '';

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'aenv-node-storage-'));
    raw = join(work, 'base.raw');
    const bytes = Buffer.alloc(SIZE);
    for (let m = 0; m < SIZE / MiB; m += 2) bytes.fill(m + 1, m * MiB, (m + 1) * MiB);
    await writeFile(raw, bytes);
  });

  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  let baseImage: ImageSpec | undefined;

  async function startIn(home: string): Promise<NodeStorage> {
    const storage = await NodeStorage.start({ home, settings: settingsOf(home) });
    baseImage = (await storage.importBaseImage(raw)).image;
    return storage;
  }

  /** A disk of the base image for sandbox `id`, with its upper in `dir`. */
  function openBase(storage: NodeStorage, id: string, dir: string): Promise<EngineDisk> {
    const image = baseImage as ImageSpec;
    return storage.openImage({ name: id, image, upperDir: join(dir, UPPER_DIR_NAME) });
  }

  it('imports the base image once and again only when its layer is gone', async () => {
    const home = join(work, 'import');
    const first = await NodeStorage.start({ home, settings: settingsOf(home) });
    const a = await first.importBaseImage(raw).finally(() => first.close());
    assert.equal(a.imported, true);
    assert.equal(a.image.virtualSize, SIZE);
    assert.equal(a.image.layers.length, 1);
    const second = await NodeStorage.start({ home, settings: settingsOf(home) });
    try {
      const b = await second.importBaseImage(raw, a.contentDigest);
      assert.equal(b.imported, false, 'a restarted node reuses the recorded layer');
      assert.deepEqual(b.image, a.image);
      await new FsBlobStore(join(home, 'blobs')).delete(layerKey(a.image.layers[0] ?? ''));
      const c = await second.importBaseImage(raw);
      assert.equal(c.imported, true, 'a record whose layer vanished is not trusted');
      assert.deepEqual(c.image, a.image, 'the import is deterministic');
      assert.deepEqual(await readdir(join(home, 'storage', 'tmp')), [], 'no scratch files left');
    } finally {
      await second.close();
    }
  });

  it('serves a sandbox disk, seals it while served, and deletes the upper on close', async () => {
    const home = join(work, 'serve');
    const storage = await startIn(home);
    try {
      const dir = join(home, 'sandboxes', 'sbx1');
      await mkdir(dir, { recursive: true });
      const disk = await openBase(storage, 'sbx1', dir);
      assert.equal(disk.upperDir, join(dir, UPPER_DIR_NAME));
      assert.ok(existsSync(disk.upperDir), 'the upper lives in the sandbox directory');
      const uri = uriOf(disk);
      await runQemuIo(uri, ['read -P 1 0 1M', 'read -P 0 1M 1M', 'write -P 0xa1 1M 64k']);
      const sealed = await disk.seal();
      assert.equal(sealed.image.layers.length, 2);
      assert.deepEqual(disk.image, sealed.image, 'the disk continues on the sealed stack');
      await runQemuIo(uri, ['read -P 0xa1 1M 64k', 'write -P 0xb2 3M 4k']);
      await disk.flush();
      assert.ok((await storage.stats()).exports.sbx1, 'served');

      // The sealed stack alone (no upper) holds the first write, not the later one.
      const store = new FsBlobStore(join(home, 'blobs'));
      const device = await ImageDevice.open({ image: sealed.image, store });
      const buf = Buffer.alloc(4096);
      await device.readAt(buf, 1 * MiB);
      assert.ok(buf.every((b) => b === 0xa1));
      await device.readAt(buf, 3 * MiB);
      assert.ok(
        buf.every((b) => b === 0),
        'written after the seal: only in the upper',
      );
      await device.close();

      await disk.close();
      await disk.close();
      assert.equal(existsSync(disk.upperDir), false, 'the upper is deleted');
      assert.equal(existsSync(join(home, 'nbd', 'sbx1.sock')), false, 'the socket is gone');
      assert.equal((await storage.stats()).exports.sbx1, undefined);
      assert.equal(storage.disk('sbx1'), undefined);
      assert.ok(await store.head(layerKey(sealed.digest)), 'sealed layers stay in the store');
    } finally {
      await storage.close();
    }
  });

  it('fails without leaving an upper, and closes open disks on close', async () => {
    const home = join(work, 'fail');
    const storage = await startIn(home);
    const dir = join(home, 'sandboxes', 'sbx2');
    await mkdir(dir, { recursive: true });
    try {
      const missing = { virtualSize: SIZE, layers: [`sha256:${'0'.repeat(64)}`] };
      await assert.rejects(
        storage.openImage({ name: 'sbx2', image: missing, upperDir: join(dir, UPPER_DIR_NAME) }),
        (err: unknown) =>
          err instanceof AenvError &&
          err.code === 'SBX_DISK_FAILED' &&
          err.cause instanceof AenvError &&
          err.cause.code === 'LAYER_NOT_FOUND',
      );
      assert.deepEqual(await readdir(dir), [], 'no upper was created');
      assert.deepEqual(await readdir(join(home, 'nbd')), []);
      const disk = await openBase(storage, 'sbx2', dir);
      assert.ok(existsSync(disk.upperDir));
      await storage.close();
      assert.equal(existsSync(disk.upperDir), false, 'close deleted the open disk upper');
      assert.deepEqual(await readdir(join(home, 'nbd')), []);
    } finally {
      await storage.close();
    }
  });

  it('removes what a SIGKILLed daemon left behind at the next start', async () => {
    const home = join(work, 'killed');
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL('fixtures/storage-child.js', import.meta.url)), home, raw, 'sbx3'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
      });
      const left = JSON.parse(line) as { socket: string; upperDir: string };
      await runQemuIo(nbdUnixUri(left.socket, 'sbx3'), ['write -P 0xcc 0 64k', 'flush']);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      assert.ok(existsSync(left.socket), 'a stale socket is left');
      assert.ok(existsSync(left.upperDir), 'an upper is left');
      const lock = (await readFile(join(home, 'cache', 'lock'), 'utf8')).trim();
      assert.equal(lock.split(' ')[0], String(child.pid), 'the lock names the dead daemon');
      await mkdir(join(home, 'storage', 'tmp'), { recursive: true });
      await writeFile(join(home, 'storage', 'tmp', 'aenv-import-x.layer'), 'partial');
      await mkdir(join(home, 'blobs', '.tmp'), { recursive: true });
      await writeFile(join(home, 'blobs', '.tmp', 'half-put'), 'partial');

      await removeLeftoverSandboxes(join(home, 'sandboxes'));
      const storage = await startIn(home);
      try {
        assert.equal(existsSync(left.socket), false, 'stale socket removed');
        assert.equal(existsSync(left.upperDir), false, 'upper removed with its sandbox dir');
        assert.equal(existsSync(join(home, 'storage', 'tmp', 'aenv-import-x.layer')), false);
        assert.equal(existsSync(join(home, 'blobs', '.tmp', 'half-put')), false);
        const dir = join(home, 'sandboxes', 'sbx3');
        await mkdir(dir, { recursive: true });
        const disk = await openBase(storage, 'sbx3', dir);
        await runQemuIo(uriOf(disk), ['read -P 1 0 64k']);
        const taken = (await readFile(join(home, 'cache', 'lock'), 'utf8')).trim();
        assert.equal(
          taken.split(' ')[0],
          String(process.pid),
          'the dead owner cache lock was taken over',
        );
      } finally {
        await storage.close();
      }
    } finally {
      child.kill('SIGKILL');
    }
  });
});
