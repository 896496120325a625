// The NBD server against QEMU's own NBD client (qemu-img, qemu-io over
// nbd+unix://): reads, writes, zeroes, trims, flushes, a random write
// workload compared with `qemu-img compare` against a reference raw file,
// reconnects, several exports and connections at once, seal while served,
// and the main thread's event loop staying responsive under block I/O.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { threadId } from 'node:worker_threads';
import { FsBlobStore } from '../src/blob/fs-blob-store.js';
import { STORAGE_CHANNELS } from '../src/events.js';
import { ImageDevice } from '../src/image/image-device.js';
import type { ImageSpec } from '../src/image/image-spec.js';
import { NbdServer } from '../src/nbd/nbd-server.js';
import { nbdUnixUri } from '../src/nbd/protocol.js';
import { exportRawImage } from '../src/transfer/export-raw.js';
import { importRawImage } from '../src/transfer/import-raw.js';
import { Prng } from './helpers/prng.js';
import { run, runOk } from './helpers/run.js';
import { tempDir, type TempDir } from './helpers/tmp.js';

const MiB = 1 << 20;
const SIZE = 64 * MiB;
const qemuMissing =
  (await run('qemu-img', ['--version'])).code !== 0 ? 'qemu-img is not installed' : undefined;

describe('NBD server with QEMU clients', { skip: qemuMissing }, () => {
  let dir: TempDir;
  let server: NbdServer;
  let image: Required<ImageSpec>;
  let storeRoot: string;
  let ref: string;
  const uri = (name: string) => nbdUnixUri(join(dir.path, 'sock', `${name}.sock`), name);
  const exportSpec = (upper: string) => ({
    image,
    store: { kind: 'fs' as const, root: storeRoot },
    upper: { dir: join(dir.path, upper) },
  });

  before(async () => {
    dir = await tempDir();
    storeRoot = join(dir.path, 'store');
    const rng = new Prng(42);
    const raw = Buffer.alloc(SIZE);
    for (let m = 0; m < SIZE / MiB; m += 2) rng.bytes(MiB).copy(raw, m * MiB);
    ref = join(dir.path, 'ref.raw');
    await writeFile(ref, raw);
    ({ image } = await importRawImage(ref, {
      store: new FsBlobStore(storeRoot),
      workDir: dir.path,
    }));
    server = await NbdServer.start({ socketDir: join(dir.path, 'sock') });
  });

  after(async () => {
    await server?.close();
    await dir?.remove();
  });

  it('serves block I/O from a worker thread', () => {
    assert.notEqual(server.threadId, threadId);
  });

  it('qemu-img reads the image and qemu-io reads, writes, zeroes and trims', async () => {
    await server.addExport('basic', exportSpec('u-basic'));
    const info = JSON.parse(await runOk('qemu-img', ['info', '--output=json', uri('basic')])) as {
      'virtual-size': number;
    };
    assert.equal(info['virtual-size'], SIZE);
    const out = await runOk('qemu-io', [
      '-f',
      'raw',
      '-c',
      'write -P 0xab 1000 3000',
      '-c',
      'read -P 0xab 1000 3000',
      '-c',
      `read -P 0 ${MiB + 5} 1000`,
      '-c',
      `write -z ${4 * MiB} ${MiB}`,
      '-c',
      `read -P 0 ${4 * MiB} ${MiB}`,
      '-c',
      `discard ${8 * MiB} ${MiB}`,
      '-c',
      'flush',
      uri('basic'),
    ]);
    assert.doesNotMatch(out, /Pattern verification failed|error/i, out);
    const again = await runOk('qemu-io', [
      '-f',
      'raw',
      '-c',
      'read -P 0xab 1000 3000',
      uri('basic'),
    ]);
    assert.doesNotMatch(again, /Pattern verification failed/, 'a reconnect sees the writes');
    const stats = await server.stats();
    assert.ok((stats.exports.basic?.writes ?? 0) >= 1);
    assert.ok((stats.exports.basic?.zeroes ?? 0) + (stats.exports.basic?.trims ?? 0) >= 2);
    await server.removeExport('basic');
  });

  it('a random write workload leaves the export identical to a reference raw file', async () => {
    await server.addExport('random', exportSpec('u-random'));
    const mine = join(dir.path, 'mine.raw');
    await copyFile(ref, mine);
    const rng = new Prng(7);
    const cmds: string[] = [];
    for (let i = 0; i < 300; i++) {
      const aligned = rng.next() < 0.6;
      const len = aligned ? rng.int(1, 64) * 4096 : rng.int(1, 200_000);
      const off = aligned ? rng.int(0, (SIZE - len) / 4096) * 4096 : rng.int(0, SIZE - len);
      const r = rng.next();
      if (r < 0.8) cmds.push(`write -P ${rng.int(1, 256)} ${off} ${len}`);
      else cmds.push(`write -z ${off} ${len}`);
    }
    const args = cmds.flatMap((c) => ['-c', c]);
    await runOk('qemu-io', ['-f', 'raw', ...args, mine]);
    await runOk('qemu-io', ['-f', 'raw', ...args, '-c', 'flush', uri('random')]);
    const cmp = await run('qemu-img', ['compare', '-f', 'raw', '-F', 'raw', mine, uri('random')]);
    assert.equal(cmp.code, 0, cmp.stdout + cmp.stderr);
    assert.match(cmp.stdout, /Images are identical/);

    const sealed = await server.sealExport('random');
    assert.equal(sealed.image.layers.length, 2);
    const after = await run('qemu-img', ['compare', '-f', 'raw', '-F', 'raw', mine, uri('random')]);
    assert.equal(after.code, 0, 'identical after sealing, through the same export');
    await server.removeExport('random');

    const device = await ImageDevice.open({
      image: sealed.image,
      store: new FsBlobStore(storeRoot),
      upper: { dir: join(dir.path, 'u-random'), mode: 'open' },
    });
    try {
      const out = join(dir.path, 'exported.raw');
      await exportRawImage(device, out);
      assert.ok((await readFile(out)).equals(await readFile(mine)), 'the export to raw matches');
    } finally {
      await device.close();
    }
  });

  it('serves several exports and connections at once; qemu-img convert writes through it', async () => {
    await server.addExport('a', exportSpec('u-a'));
    await server.addExport('b', exportSpec('u-b'));
    await assert.rejects(server.addExport('a', exportSpec('u-x')), { code: 'NBD_EXPORT_EXISTS' });
    const pattern = join(dir.path, 'pattern.raw');
    await runOk('qemu-img', ['create', '-f', 'raw', pattern, String(SIZE)]);
    await runOk('qemu-io', ['-f', 'raw', '-c', `write -P 0x11 0 ${16 * MiB}`, pattern]);
    const results = await Promise.all([
      run('qemu-img', ['convert', '-n', '-f', 'raw', '-O', 'raw', pattern, uri('a')]),
      run('qemu-img', ['compare', '-f', 'raw', '-F', 'raw', ref, uri('b')]),
      run('qemu-img', ['compare', '-f', 'raw', '-F', 'raw', ref, uri('b')]),
    ]);
    for (const r of results) assert.equal(r.code, 0, r.stdout + r.stderr);
    const cmp = await run('qemu-img', ['compare', '-f', 'raw', '-F', 'raw', pattern, uri('a')]);
    assert.equal(cmp.code, 0, cmp.stdout + cmp.stderr);
    const stats = await server.stats();
    assert.ok((stats.exports.b?.connectionsTotal ?? 0) >= 2);
    await server.removeExport('a');
    await server.removeExport('b');
    await assert.rejects(server.removeExport('a'), { code: 'NBD_EXPORT_NOT_FOUND' });
  });

  it('keeps the main event loop responsive during heavy block I/O, and forwards events', async () => {
    const connects: unknown[] = [];
    const onConnect = (m: unknown) => connects.push(m);
    subscribe(STORAGE_CHANNELS.nbdConnect, onConnect);
    await server.addExport('busy', exportSpec('u-busy'));
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    try {
      const r = await run('qemu-img', [
        'convert',
        '-n',
        '-f',
        'raw',
        '-O',
        'raw',
        ref,
        uri('busy'),
      ]);
      assert.equal(r.code, 0, r.stderr);
    } finally {
      lag.disable();
      unsubscribe(STORAGE_CHANNELS.nbdConnect, onConnect);
    }
    const maxMs = lag.max / 1e6;
    console.log(
      `main event loop delay during a 64 MiB convert: p99 ${(lag.percentile(99) / 1e6).toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`,
    );
    // A generous bound: the point is that the main thread does no block I/O.
    assert.ok(maxMs < 1000, `main loop stalled for ${maxMs} ms`);
    assert.ok(connects.length >= 1, 'nbd-connect was forwarded from the worker');
    await server.removeExport('busy');
  });
});
