#!/usr/bin/env node
// Storage engine benchmark, with QEMU's own client (`qemu-img bench`):
// sequential and 4 KiB random reads and writes through the engine's NBD
// server, next to the same raw file opened directly by QEMU and served by
// `qemu-nbd` over the same kind of unix socket (which separates the cost of
// NBD itself from the cost of the engine). Then a cold read of an image
// whose layer sits behind a local S3 server (s3rver) with an empty chunk
// cache, against the warm re-read, and the main thread's event-loop delay
// while the NBD server runs in its worker versus inline.
//
//   npm run build && node bench/storage.mjs [imageMiB=256]
//
// Everything lives in a temporary directory removed at the end, also on
// failure; every server listens on loopback or a unix socket. Prints
// figures, never fails on them (compare the columns of one run: these
// machines are noisy).
import { Buffer } from 'node:buffer';
import { execFile, spawn } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
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

const exec = promisify(execFile);
const MiB = 1 << 20;
const SIZE = Number(process.argv[2] ?? 256) * MiB;
const dir = mkdtempSync(join(tmpdir(), 'aenv-storage-bench-'));
const cleanups = [];

/** `qemu-img bench` workloads: [name, extra args, request size, request count]. */
const STRIDE = 4096 * 7919; // odd number of blocks: visits every block of a power-of-two image
const WORKLOADS = [
  [
    'seq read 128K',
    ['-s', String(128 << 10), '-S', String(128 << 10)],
    128 << 10,
    SIZE / (128 << 10),
  ],
  ['rand read 4K', ['-s', '4096', '-S', String(STRIDE)], 4096, 20000],
  [
    'seq write 128K',
    ['-w', '-s', String(128 << 10), '-S', String(128 << 10)],
    128 << 10,
    SIZE / (128 << 10),
  ],
  ['rand write 4K', ['-w', '-s', '4096', '-S', String(STRIDE)], 4096, 20000],
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
  cleanups.push(() => child.kill('SIGTERM'));
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
  cleanups.push(() => server.close());
  const socket = await server.addExport('bench', spec('upper'));
  const pooled = await NbdServer.start({ socketDir: join(dir, 'sock-pool'), syncIo: false });
  cleanups.push(() => pooled.close());
  const poolSocket = await pooled.addExport('pool', spec('upper-pool'));
  const targets = [
    ['raw file (QEMU file driver)', rawFile],
    ['raw file via qemu-nbd', nbdUnixUri(qemuNbdSocket, 'raw')],
    ['engine via aenv NBD', nbdUnixUri(socket, 'bench')],
    ['engine, thread-pool I/O', nbdUnixUri(poolSocket, 'pool')],
  ];
  const rows = [];
  for (const [name, args, size, count] of WORKLOADS) {
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
  cleanups.push(async () => {
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
  cleanups.push(() => server.close());
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
  cleanups.push(() => server.close());
  const ws = await server.addExport('worker', spec('u-worker'));
  const worker = await lagWhile(() => qemuBench(nbdUnixUri(ws, 'worker'), args, 20000));
  await server.close();
  // The same server code on the main thread, with the same synchronous file I/O.
  useSyncIo(true);
  const host = new NbdHost({ socketDir: join(dir, 'sock-inline') });
  cleanups.push(() => host.close());
  const is = await host.addExport('inline', spec('u-inline'));
  const inline = await lagWhile(() => qemuBench(nbdUnixUri(is, 'inline'), args, 20000));
  await host.close();
  useSyncIo(false);
  return { worker, inline };
}

async function main() {
  console.log(`storage bench: ${SIZE / MiB} MiB image, qemu-img bench depth 16, in ${dir}`);
  makeRaw(join(dir, 'base.raw'));
  const { image } = await importRawImage(join(dir, 'base.raw'), {
    store: new FsBlobStore(join(dir, 'store')),
    workDir: dir,
  });

  const { rows, targets } = await blockBench(image);
  console.log('\nthroughput (MB/s | IOPS), and the engine as a fraction of each baseline:');
  for (const r of rows) {
    const cells = targets.map(
      (t) => `${t}: ${r[t].mbps.toFixed(0)} MB/s ${r[t].iops.toFixed(0)} IOPS`,
    );
    const e = r[targets[2]];
    const ratios =
      `engine/raw ${(e.mbps / r[targets[0]].mbps).toFixed(2)}, ` +
      `engine/qemu-nbd ${(e.mbps / r[targets[1]].mbps).toFixed(2)}, ` +
      `sync/pool I/O ${(e.mbps / r[targets[3]].mbps).toFixed(2)}`;
    console.log(`  ${r.name}\n    ${cells.join('\n    ')}\n    -> ${ratios}`);
  }

  const lazy = await lazyBench();
  const mbs = (s) => (SIZE / MiB / s).toFixed(0);
  console.log(
    `\nlazy S3-backed sequential read of the whole image: cold ${lazy.cold.toFixed(2)} s (${mbs(lazy.cold)} MB/s), ` +
      `warm ${lazy.warm.toFixed(2)} s (${mbs(lazy.warm)} MB/s)  ->  cold/warm ${(lazy.cold / lazy.warm).toFixed(2)}x`,
  );
  console.log(
    `  cache: ${lazy.cache.misses} misses, ${lazy.cache.hits} hits, ${(lazy.cache.bytesFetched / MiB).toFixed(0)} MiB fetched`,
  );

  const lag = await lagBench(image);
  const l = (x) =>
    `p99 ${x.p99.toFixed(1)} ms, max ${x.max.toFixed(1)} ms (${x.secs.toFixed(1)} s run)`;
  console.log('\nmain-thread event-loop delay during 20000 random 4K writes:');
  console.log(`  NBD in its worker thread: ${l(lag.worker)}`);
  console.log(`  NBD inline on the main thread: ${l(lag.inline)}`);
  console.log(`  -> inline/worker max delay ${(lag.inline.max / lag.worker.max).toFixed(1)}x`);
}

try {
  await main();
} finally {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
