#!/usr/bin/env node
/**
 * Storage engine with QEMU's own client (`qemu-img bench`): sequential and
 * 4 KiB random reads and writes through the engine's NBD server, next to
 * the same raw file opened directly by QEMU and served by `qemu-nbd` over
 * the same kind of unix socket (which separates the cost of NBD itself
 * from the cost of the engine). Then a cold read of an image whose layer
 * sits behind a local S3 server (s3rver on loopback) with an empty chunk
 * cache, against the warm re-read; and the main thread's event-loop delay
 * while the NBD server runs in its worker versus inline.
 *
 *   node bench/storage.mjs [--quick] [--image-mib 256] [--rand-ops 20000]
 *
 * Everything lives in the work directory, removed at the end; every server
 * listens on loopback or a unix socket.
 *
 * @module
 */
import { Buffer } from 'node:buffer';
import { execFile, spawn } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import S3rver from 's3rver';
import {
  FsBlobStore,
  NbdHost,
  NbdServer,
  S3BlobStore,
  importRawImage,
  nbdUnixUri,
  useSyncIo,
} from '@aenv/storage';
import { runBench } from './lib/bench-main.mjs';

const exec = promisify(execFile);
const MiB = 1 << 20;
/** Set by the run: image size (bytes), random ops per workload, work directory, undo stack. */
let SIZE = 0;
let RAND_OPS = 0;
let dir = '';
let cleanups;

/** `qemu-img bench` workloads: [name, extra args, request size, request count]. */
const STRIDE = 4096 * 7919; // odd number of blocks: visits every block of a power-of-two image
const workloads = () => [
  [
    'seq read 128K',
    ['-s', String(128 << 10), '-S', String(128 << 10)],
    128 << 10,
    SIZE / (128 << 10),
  ],
  ['rand read 4K', ['-s', '4096', '-S', String(STRIDE)], 4096, RAND_OPS],
  [
    'seq write 128K',
    ['-w', '-s', String(128 << 10), '-S', String(128 << 10)],
    128 << 10,
    SIZE / (128 << 10),
  ],
  ['rand write 4K', ['-w', '-s', '4096', '-S', String(STRIDE)], 4096, RAND_OPS],
];

function makeRaw(path) {
  const fd = openSync(path, 'w');
  const buf = Buffer.alloc(4 * MiB);
  for (let o = 0; o < SIZE; o += buf.length) writeSync(fd, randomFillSync(buf), 0, buf.length, o);
  closeSync(fd);
}

async function qemuBench(target, args, count, format = 'raw') {
  const { stdout } = await exec('qemu-img', [
    'bench',
    '-f',
    format,
    '-d',
    '16',
    '-c',
    String(count),
    ...args,
    target,
  ]);
  const m = /Run completed in ([\d.]+) seconds/.exec(stdout);
  if (!m) throw new Error(`unexpected qemu-img bench output: ${stdout}`);
  return Number(m[1]);
}

async function startQemuNbd(file, socket) {
  const child = spawn(
    'qemu-nbd',
    ['-f', 'raw', '-k', socket, '-x', 'raw', '--persistent', '--cache=writeback', file],
    {
      stdio: 'ignore',
    },
  );
  cleanups.add('stop qemu-nbd', () => child.kill('SIGTERM'));
  for (let i = 0; i < 200 && !existsSync(socket); i++) await sleep(10);
  return child;
}

function fmt(bytes, seconds, reqs) {
  return { mbps: bytes / MiB / seconds, iops: reqs / seconds };
}

async function blockBench(image) {
  const rawFile = join(dir, 'raw-copy.raw');
  copyFileSync(join(dir, 'base.raw'), rawFile);
  const nbdFile = join(dir, 'qemu-nbd-copy.raw');
  copyFileSync(join(dir, 'base.raw'), nbdFile);
  const qemuNbdSocket = join(dir, 'qemu-nbd.sock');
  await startQemuNbd(nbdFile, qemuNbdSocket);
  const spec = (upper) => ({
    image,
    store: { kind: 'fs', root: join(dir, 'store') },
    upper: { dir: join(dir, upper) },
  });
  const server = await NbdServer.start({ socketDir: join(dir, 'sock') });
  cleanups.add('close nbd server', () => server.close());
  const socket = await server.addExport('bench', spec('upper'));
  const pooled = await NbdServer.start({ socketDir: join(dir, 'sock-pool'), syncIo: false });
  cleanups.add('close nbd server', () => pooled.close());
  const poolSocket = await pooled.addExport('pool', spec('upper-pool'));
  const targets = [
    ['raw file (QEMU file driver)', rawFile],
    ['raw file via qemu-nbd', nbdUnixUri(qemuNbdSocket, 'raw')],
    ['engine via aenv NBD', nbdUnixUri(socket, 'bench')],
    ['engine, thread-pool I/O', nbdUnixUri(poolSocket, 'pool')],
  ];
  const rows = [];
  for (const [name, args, size, count] of workloads()) {
    const row = { name };
    for (const [tname, target] of targets) {
      const secs = await qemuBench(target, args, count);
      row[tname] = fmt(size * count, secs, count);
    }
    rows.push(row);
  }
  await server.close();
  await pooled.close();
  return { rows, targets: targets.map((t) => t[0]) };
}

async function startS3() {
  const s3dir = join(dir, 's3');
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3dir,
    configureBuckets: [{ name: 'bench', configs: [] }],
  });
  const { port } = await server.run();
  cleanups.add('stop s3rver', async () => {
    server.httpServer?.closeAllConnections();
    await server.close();
  });
  return `http://127.0.0.1:${port}`;
}

async function lazyBench() {
  const endpoint = await startS3();
  const spec = {
    kind: 's3',
    bucket: 'bench',
    endpoint,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  };
  const store = new S3BlobStore(spec);
  const { image } = await importRawImage(join(dir, 'base.raw'), { store, workDir: dir });
  await store.close();
  const server = await NbdServer.start({ socketDir: join(dir, 'sock-s3') });
  cleanups.add('close nbd server', () => server.close());
  const socket = await server.addExport('lazy', {
    image,
    store: spec,
    cache: { dir: join(dir, 'cache'), budgetBytes: SIZE },
  });
  const uri = nbdUnixUri(socket, 'lazy');
  const args = ['-s', String(128 << 10), '-S', String(128 << 10)];
  const count = SIZE / (128 << 10);
  const cold = await qemuBench(uri, args, count);
  const warm = await qemuBench(uri, args, count);
  const stats = await server.stats();
  await server.close();
  return { cold, warm, cache: Object.values(stats.caches)[0] };
}

async function lagWhile(fn) {
  const h = monitorEventLoopDelay({ resolution: 2 });
  h.enable();
  const t0 = performance.now();
  await fn();
  h.disable();
  return { p99: h.percentile(99) / 1e6, max: h.max / 1e6, secs: (performance.now() - t0) / 1000 };
}

async function lagBench(image) {
  const spec = (u) => ({
    image,
    store: { kind: 'fs', root: join(dir, 'store') },
    upper: { dir: join(dir, u) },
  });
  const args = ['-w', '-s', '4096', '-S', String(STRIDE)];
  const server = await NbdServer.start({ socketDir: join(dir, 'sock-lag') });
  cleanups.add('close nbd server', () => server.close());
  const ws = await server.addExport('worker', spec('u-worker'));
  const worker = await lagWhile(() => qemuBench(nbdUnixUri(ws, 'worker'), args, RAND_OPS));
  await server.close();
  // The same server code on the main thread, with the same synchronous file I/O.
  useSyncIo(true);
  const host = new NbdHost({ socketDir: join(dir, 'sock-inline') });
  cleanups.add('close nbd host', () => host.close());
  const is = await host.addExport('inline', spec('u-inline'));
  const inline = await lagWhile(() => qemuBench(nbdUnixUri(is, 'inline'), args, RAND_OPS));
  await host.close();
  useSyncIo(false);
  return { worker, inline };
}

/** Sequential workloads in MB/s, random ones in IOPS; the engine as a fraction of each baseline. */
function reportBlock(report, rows, targets) {
  for (const r of rows) {
    const random = r.name.startsWith('rand');
    const [key, unit] = random ? ['iops', 'IOPS'] : ['mbps', 'MB/s'];
    report.section(`qemu-img bench, ${r.name} (depth 16)`);
    for (const t of targets) report.value(t, r[t][key], unit);
    const e = r[targets[2]][key];
    report.ratio(`${r.name}: engine / raw file`, e, r[targets[0]][key]);
    report.ratio(`${r.name}: engine / qemu-nbd`, e, r[targets[1]][key]);
    report.ratio(`${r.name}: engine sync / thread-pool I/O`, e, r[targets[3]][key]);
  }
}

await runBench({
  name: 'storage',
  title: 'storage engine vs. raw file and qemu-nbd (qemu-img bench); cold S3 vs. warm cache',
  options: {
    'image-mib': { default: 256, quick: 16, doc: 'image size, MiB' },
    'rand-ops': { default: 20000, quick: 500, doc: 'random 4K requests per workload' },
  },
  requires: { commands: ['qemu-img', 'qemu-nbd'] },
  run: async (ctx) => {
    const { report, params } = ctx;
    SIZE = params['image-mib'] * MiB;
    RAND_OPS = params['rand-ops'];
    dir = ctx.work;
    cleanups = ctx.cleanup;
    makeRaw(join(dir, 'base.raw'));
    const { image } = await importRawImage(join(dir, 'base.raw'), {
      store: new FsBlobStore(join(dir, 'store')),
      workDir: dir,
    });
    const { rows, targets } = await blockBench(image);
    reportBlock(report, rows, targets);
    ctx.progress('block figures measured');
    const lazy = await lazyBench();
    report.section(`whole image read sequentially, layer behind S3 (s3rver on loopback)`);
    report.value('cold (empty chunk cache)', SIZE / MiB / lazy.cold, 'MB/s');
    report.value('warm (chunks cached)', SIZE / MiB / lazy.warm, 'MB/s');
    report.value('cache misses', lazy.cache.misses, 'chunks');
    report.value('fetched from S3', lazy.cache.bytesFetched / MiB, 'MiB');
    report.ratio('cold / warm read time', lazy.cold, lazy.warm);
    const lag = await lagBench(image);
    report.section(`main-thread event-loop delay during ${RAND_OPS} random 4K writes`);
    report.value('NBD in its worker thread: p99', lag.worker.p99, 'ms');
    report.value('NBD in its worker thread: max', lag.worker.max, 'ms');
    report.value('NBD inline on the main thread: p99', lag.inline.p99, 'ms');
    report.value('NBD inline on the main thread: max', lag.inline.max, 'ms');
    report.ratio('inline / worker max delay', lag.inline.max, lag.worker.max);
  },
});
