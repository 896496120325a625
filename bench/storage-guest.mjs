#!/usr/bin/env node
// The storage engine as a guest sees it. Two parts:
//
// 1. In-guest throughput: a sandbox booted from the engine (the base image
//    as a layer, an NBD export with an upper) against the same base image
//    served as a raw file drive (a sparse copy, QEMU's file driver), both
//    through the same node code (MicroVmLauncher + startNode; only the disk
//    source differs) and driven with the e2b SDK. Inside the guest, as root,
//    with O_DIRECT: sequential 1 MiB reads of /dev/vda, 4 KiB random reads of
//    /dev/vda, sequential 1 MiB writes of a new file, 4 KiB random writes
//    into it (each write phase ends with fsync).
// 2. Cold vs warm boot with the layers behind a real S3 server (s3rver on
//    loopback): a node with the s3 blob store; its first create after start
//    has an empty chunk cache (cold: every chunk the boot reads is fetched),
//    the following ones find the chunks cached (warm). The node is restarted
//    once (the cache starts empty again; the base layer is not re-imported).
//
//   npm run build && node bench/storage-guest.mjs [--runs 3] [--io-mib 256] [--rand-ops 3000]
//
// Needs root (network slots) and QEMU. Guest artifacts come from
// $AENV_ARTIFACTS_DIR (default /var/tmp/aenv-test-cache). Everything else
// lives in a temporary directory removed at the end, also on failure. Prints
// figures and ratios, never fails on them (TCG and a shared machine: compare
// the columns of one run). `qemu-img bench` figures of the same comparison:
// bench/storage.mjs.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { Sandbox } from 'e2b';
import S3rver from 's3rver';
import { prepareGuestArtifacts } from '../packages/guest/dist/src/index.js';
import { SlotManager } from '../packages/network/dist/src/index.js';
import {
  MicroVmLauncher,
  NodeStorage,
  createLogger,
  loadNodeConfig,
  serveNode,
  startNode,
} from '../packages/server/dist/src/index.js';
import { resolveStorageSettings } from '../packages/storage/dist/src/index.js';
import { createVmmDriver } from '../packages/vmm/dist/src/index.js';

// The AWS SDK warns once per process that it will drop Node 20; not a figure.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const exec = promisify(execFile);
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    'io-mib': { type: 'string', default: '256' },
    'rand-ops': { type: 'string', default: '3000' },
  },
});
const RUNS = Number(values.runs);
const IO_MIB = Number(values['io-mib']);
const RAND_OPS = Number(values['rand-ops']);
const cacheDir = process.env.AENV_ARTIFACTS_DIR ?? '/var/tmp/aenv-test-cache';
const work = mkdtempSync(join(tmpdir(), 'aenv-bench-guest-'));
const cleanups = [];
const logger = createLogger('warn');
const MiB = 1 << 20;

// Runs inside the guest (python3 is in the base image). O_DIRECT needs
// aligned buffers: anonymous mmaps are page-aligned.
const GUEST_BENCH = `
import json, mmap, os, random, sys, time
io_mib, rand_ops = int(sys.argv[1]), int(sys.argv[2])
res = {}
def timed(name, nbytes, ops, fn):
    t0 = time.perf_counter(); fn(); s = time.perf_counter() - t0
    res[name] = {"mbps": nbytes / 1048576 / s, "iops": ops / s}
big, small = mmap.mmap(-1, 1 << 20), mmap.mmap(-1, 4096)
big.write(os.urandom(1 << 20)); small.write(os.urandom(4096))
rnd = random.Random(7)
fd = os.open("/dev/vda", os.O_RDONLY | os.O_DIRECT)
def seq_read():
    for i in range(io_mib): os.preadv(fd, [big], i << 20)
timed("seq read 1M", io_mib << 20, io_mib, seq_read)
span = (io_mib << 20) // 4096
offs = [rnd.randrange(span) * 4096 for _ in range(rand_ops)]
def rand_read():
    for o in offs: os.preadv(fd, [small], o)
timed("rand read 4K", rand_ops * 4096, rand_ops, rand_read)
os.close(fd)
path = "/root/aenv-bench.dat"
wfd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
wmib = max(16, io_mib // 2)
def seq_write():
    for i in range(wmib): os.pwritev(wfd, [big], i << 20)
    os.fsync(wfd)
timed("seq write 1M", wmib << 20, wmib, seq_write)
wspan = (wmib << 20) // 4096
woffs = [rnd.randrange(wspan) * 4096 for _ in range(rand_ops)]
def rand_write():
    for o in woffs: os.pwritev(wfd, [small], o)
    os.fsync(wfd)
timed("rand write 4K", rand_ops * 4096, rand_ops, rand_write)
os.close(wfd); os.unlink(path)
print(json.dumps(res))
`;

/** A bench-only stand-in disk source: a sparse copy of the raw base image per sandbox. */
function rawDisks(baseImage) {
  return {
    open: async ({ dir }) => {
      const path = join(dir, 'rootfs.raw');
      await exec('cp', ['--sparse=always', baseImage, path]);
      return {
        source: { kind: 'file', path, format: 'raw' },
        image: undefined,
        seal: () => Promise.reject(new Error('a raw file disk cannot be sealed')),
        flush: () => Promise.resolve(),
        close: () => rm(path, { force: true }),
      };
    },
  };
}

function nodeConfig(home, prefix, pool, env = {}) {
  return loadNodeConfig(undefined, {
    PATH: process.env.PATH,
    AENV_HOME: home,
    AENV_PORT: '0',
    AENV_ARTIFACTS_DIR: cacheDir,
    AENV_NETWORK_PREFIX: prefix,
    AENV_NETWORK_ADDRESS_POOL: pool,
    AENV_NETWORK_POOL_LOW: '1',
    AENV_NETWORK_POOL_HIGH: '2',
    AENV_NETWORK_LOCK_DIR: join(home, 'lock'),
    AENV_LOG_LEVEL: 'warn',
    ...env,
  });
}

/** A node over MicroVmLauncher with the given disks (the wiring of serveNode, minus storage). */
async function nodeWith(name, artifacts, driver, makeDisks) {
  const home = join(work, name);
  await mkdir(home, { recursive: true });
  const config = nodeConfig(home, `bg${name.slice(0, 4)}`, '10.249.0.0/24');
  const { disks, close: closeDisks } = await makeDisks(home, config);
  const slots = await SlotManager.start({ config: config.network });
  const node = await startNode({
    config,
    logger,
    envdVersion: artifacts.envdVersion,
    templates: [{ id: 'base', alias: 'base', vcpus: 2, memoryMiB: 512, diskSizeMiB: 2048 }],
    launcher: new MicroVmLauncher({
      driver,
      slots,
      artifacts,
      disks,
      sandboxesDir: join(home, 'sandboxes'),
    }),
  });
  const close = async () => {
    await node.close();
    await closeDisks();
  };
  cleanups.push(close);
  return { node, close };
}

async function createTimed(node) {
  const sdk = { apiKey: node.apiKey, apiUrl: node.url, sandboxUrl: node.url };
  const t0 = performance.now();
  const sbx = await Sandbox.create('base', { ...sdk, timeoutMs: 900_000 });
  return { sbx, ms: performance.now() - t0 };
}

async function guestIo(node) {
  const { sbx, ms } = await createTimed(node);
  try {
    await sbx.files.write('/root/aenv-bench.py', GUEST_BENCH);
    const out = await sbx.commands.run(`python3 /root/aenv-bench.py ${IO_MIB} ${RAND_OPS}`, {
      user: 'root',
      timeoutMs: 900_000,
    });
    return { createMs: ms, io: JSON.parse(out.stdout.trim().split('\n').pop()) };
  } finally {
    await sbx.kill();
  }
}

async function inGuest(artifacts, driver) {
  const results = {};
  const variants = {
    engine: async (home, config) => {
      const settings = resolveStorageSettings(config.storage, home);
      const storage = await NodeStorage.start({ home, settings });
      const base = await storage.importBaseImage(artifacts.baseImage, artifacts.digests.baseImage);
      storage.setTemplateImage('base', base.image);
      return { disks: storage, close: () => storage.close() };
    },
    raw: async () => ({ disks: rawDisks(artifacts.baseImage), close: async () => undefined }),
  };
  for (const [name, makeDisks] of Object.entries(variants)) {
    const { node, close } = await nodeWith(name, artifacts, driver, makeDisks);
    try {
      results[name] = [];
      for (let i = 0; i < RUNS; i++) {
        results[name].push(await guestIo(node));
        process.stderr.write(`  in-guest ${name} ${i + 1}/${RUNS}\n`);
      }
    } finally {
      await close();
    }
  }
  return results;
}

async function startS3() {
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: join(work, 's3'),
    configureBuckets: [{ name: 'aenv', configs: [] }],
  });
  const { port } = await server.run();
  cleanups.push(async () => {
    server.httpServer?.closeAllConnections();
    await server.close();
  });
  return `http://127.0.0.1:${port}`;
}

async function coldWarm() {
  const endpoint = await startS3();
  const home = join(work, 's3node');
  const env = {
    AENV_STORAGE_BLOB_STORE: 's3',
    AENV_STORAGE_S3_BUCKET: 'aenv',
    AENV_STORAGE_S3_ENDPOINT: endpoint,
    AENV_STORAGE_S3_ACCESS_KEY_ID: 'S3RVER',
    AENV_STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
  };
  const config = nodeConfig(home, 'bgs3', '10.248.0.0/24', env);
  const samples = { cold: [], warm: [], startMs: [] };
  for (let start = 0; start < 2; start++) {
    const t0 = performance.now();
    const node = await serveNode({ config, logger });
    samples.startMs.push(performance.now() - t0);
    cleanups.push(() => node.close());
    try {
      for (let i = 0; i < RUNS; i++) {
        const before = Object.values((await node.storage.stats()).caches)[0];
        const { sbx, ms } = await createTimed(node);
        await sbx.commands.run('true');
        await sbx.kill();
        const after = Object.values((await node.storage.stats()).caches)[0];
        const fetched = (after?.bytesFetched ?? 0) - (before?.bytesFetched ?? 0);
        samples[i === 0 ? 'cold' : 'warm'].push({ ms, fetched });
        process.stderr.write(`  s3 node start ${start + 1}, create ${i + 1}/${RUNS}\n`);
      }
    } finally {
      await node.close();
    }
  }
  return samples;
}

const p50 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

function printInGuest(r) {
  console.log(`\nin-guest O_DIRECT I/O, p50 of ${RUNS} sandboxes (MB/s | IOPS):`);
  const names = Object.keys(r.engine[0].io);
  for (const w of names) {
    const e = {
      mbps: p50(r.engine.map((x) => x.io[w].mbps)),
      iops: p50(r.engine.map((x) => x.io[w].iops)),
    };
    const raw = {
      mbps: p50(r.raw.map((x) => x.io[w].mbps)),
      iops: p50(r.raw.map((x) => x.io[w].iops)),
    };
    console.log(
      `  ${w.padEnd(14)} engine ${e.mbps.toFixed(1).padStart(7)} MB/s ${e.iops.toFixed(0).padStart(6)} IOPS` +
        `   raw file ${raw.mbps.toFixed(1).padStart(7)} MB/s ${raw.iops.toFixed(0).padStart(6)} IOPS` +
        `   -> engine/raw ${(e.mbps / raw.mbps).toFixed(2)}`,
    );
  }
  const ce = p50(r.engine.map((x) => x.createMs));
  const cr = p50(r.raw.map((x) => x.createMs));
  console.log(
    `  create (p50)   engine ${ce.toFixed(0)} ms   raw file (incl. sparse copy) ${cr.toFixed(0)} ms   -> engine/raw ${(ce / cr).toFixed(2)}`,
  );
}

function printColdWarm(s) {
  const cold = p50(s.cold.map((x) => x.ms));
  const warm = p50(s.warm.map((x) => x.ms));
  const mib = (xs) => (p50(xs.map((x) => x.fetched)) / MiB).toFixed(1);
  console.log(`\nboot from S3 (s3rver on loopback), create p50:`);
  console.log(
    `  cold (empty chunk cache)  ${cold.toFixed(0)} ms, ${mib(s.cold)} MiB fetched (n=${s.cold.length})`,
  );
  console.log(
    `  warm (chunks cached)      ${warm.toFixed(0)} ms, ${mib(s.warm)} MiB fetched (n=${s.warm.length})`,
  );
  console.log(`  -> cold/warm ${(cold / warm).toFixed(2)}x`);
  console.log(
    `  node start: first (imports the base layer into S3) ${s.startMs[0].toFixed(0)} ms, restart (layer found) ${s.startMs[1].toFixed(0)} ms`,
  );
}

try {
  process.stderr.write('artifact preparation (cache check)...\n');
  const artifacts = await prepareGuestArtifacts({ cacheDir });
  if (artifacts.baseImage === undefined) throw new Error('no base image');
  const { driver } = await createVmmDriver(nodeConfig(work, 'bgx', '10.249.0.0/24').vmm);
  console.log(
    `storage in a guest: ${RUNS} runs, ${IO_MIB} MiB sequential, ${RAND_OPS} random 4K ops (TCG)`,
  );
  printInGuest(await inGuest(artifacts, driver));
  printColdWarm(await coldWarm());
} finally {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}
