#!/usr/bin/env node
/**
 * The storage engine as a guest sees it. Two parts:
 *
 * 1. In-guest throughput: sandboxes created by a node (the rootfs is an
 *    NBD export of the engine: the template's layers plus a fresh upper)
 *    against the vmm driver restoring the same template snapshot with a
 *    raw file drive (a sparse copy of the same disk, QEMU's file driver).
 *    Inside the guest, as root, with O_DIRECT: sequential 1 MiB reads of
 *    /dev/vda, 4 KiB random reads of /dev/vda, sequential 1 MiB writes of
 *    a new file, 4 KiB random writes into it (each write phase ends with
 *    fsync).
 * 2. Cold vs. warm create with the layers behind a real S3 server (s3rver
 *    on loopback): a node with the s3 blob store; its first create after
 *    start has an empty chunk cache (every chunk the guest reads is
 *    fetched), the following ones find the chunks cached. The node is
 *    restarted once (the cache starts empty again; the base layer is not
 *    imported again).
 *
 *   node bench/storage-guest.mjs [--quick] [--runs 2] [--io-mib 256] [--rand-ops 3000]
 *
 * Needs root and QEMU; artifacts from $AENV_ARTIFACTS_DIR. `qemu-img bench`
 * figures of the same comparison: bench/storage.mjs.
 *
 * @module
 */
import { join } from 'node:path';
import S3rver from 's3rver';
import { runBench } from './lib/bench-main.mjs';
import { BareRestorer } from './lib/bare-vmm.mjs';
import { startBenchNode } from './lib/bench-node.mjs';
import { startProcess } from './lib/envd-process.mjs';
import { percentile } from './lib/stats.mjs';

// The AWS SDK warns once per process that it will drop Node 20; not a figure.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
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

/** Runs the guest script through envd at `url` (the proxy with `headers`, or envd itself). */
async function guestIo(url, params, headers = {}) {
  const b64 = Buffer.from(GUEST_BENCH).toString('base64');
  const cmd = `echo ${b64} | base64 -d > /root/aenv-bench.py && python3 /root/aenv-bench.py ${params['io-mib']} ${params['rand-ops']}`;
  const r = await startProcess(url, { cmd, headers, user: 'root', timeoutMs: 900_000 });
  if (r.exitCode !== 0) throw new Error(`guest I/O script exited ${r.exitCode}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

async function inGuest(ctx) {
  const node = await startBenchNode(ctx, {
    name: 'engine',
    prefix: 'bsguest',
    addressPool: '10.240.24.0/24',
    env: { AENV_POOL_LOW: '0', AENV_POOL_HIGH: '0' },
  });
  const bare = await BareRestorer.open(ctx, node, {
    prefix: 'bsgraw',
    addressPool: '10.240.25.0/24',
  });
  const r = { engine: [], raw: [] };
  for (let i = 0; i < ctx.params.runs; i++) {
    const { id } = await node.create();
    const headers = { 'e2b-sandbox-id': id, 'e2b-sandbox-port': '49983' };
    r.engine.push(await guestIo(node.url, ctx.params, headers));
    await node.kill(id);
    const vm = await bare.start('raw');
    try {
      r.raw.push(await guestIo(vm.url, ctx.params));
    } finally {
      await vm.stop();
    }
    ctx.progress(`in-guest I/O ${i + 1}/${ctx.params.runs}`);
  }
  await node.close();
  return r;
}

async function startS3(ctx) {
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: join(ctx.work, 's3'),
    configureBuckets: [{ name: 'aenv', configs: [] }],
  });
  const { port } = await server.run();
  ctx.cleanup.add('stop s3rver', async () => {
    server.httpServer?.closeAllConnections();
    await server.close();
  });
  return `http://127.0.0.1:${port}`;
}

const cacheFetched = async (node) =>
  Object.values((await node.node.storage.stats()).caches)[0]?.bytesFetched ?? 0;

async function coldWarm(ctx) {
  const endpoint = await startS3(ctx);
  const env = {
    AENV_STORAGE_BLOB_STORE: 's3',
    AENV_STORAGE_S3_BUCKET: 'aenv',
    AENV_STORAGE_S3_ENDPOINT: endpoint,
    AENV_STORAGE_S3_ACCESS_KEY_ID: 'S3RVER',
    AENV_STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
    AENV_POOL_LOW: '0',
    AENV_POOL_HIGH: '0',
  };
  const s = { cold: [], warm: [], startMs: [] };
  for (let start = 0; start < 2; start++) {
    const t0 = performance.now();
    const node = await startBenchNode(ctx, {
      name: 's3node',
      prefix: 'bsgs3',
      addressPool: '10.240.26.0/24',
      env,
    });
    s.startMs.push(performance.now() - t0);
    for (let i = 0; i < Math.max(2, ctx.params.runs); i++) {
      const before = await cacheFetched(node);
      const t = performance.now();
      const { id } = await node.create();
      await node.run(id, 'true');
      const ms = performance.now() - t;
      await node.kill(id);
      s[i === 0 ? 'cold' : 'warm'].push({ ms, fetched: (await cacheFetched(node)) - before });
      ctx.progress(`s3 node start ${start + 1}, create ${i + 1}`);
    }
    await node.close();
  }
  return s;
}

function reportInGuest(report, r) {
  for (const w of Object.keys(r.engine[0])) {
    const random = w.startsWith('rand');
    const [key, unit] = random ? ['iops', 'IOPS'] : ['mbps', 'MB/s'];
    report.section(`in-guest O_DIRECT ${w}`);
    const e = r.engine.map((x) => x[w][key]);
    const raw = r.raw.map((x) => x[w][key]);
    report.samples('engine (NBD export, node sandbox)', e, unit);
    report.samples('raw file drive (vmm driver restore)', raw, unit);
    report.ratio(`${w}: engine / raw file (p50)`, percentile(e, 50), percentile(raw, 50));
  }
}

await runBench({
  name: 'storage-guest',
  title: 'in-guest I/O on the engine vs. a raw file drive; cold S3 vs. warm cache creates',
  options: {
    runs: { default: 2, quick: 1, doc: 'sandboxes per variant' },
    'io-mib': { default: 256, quick: 16, doc: 'MiB read sequentially (half of it written)' },
    'rand-ops': { default: 3000, quick: 100, doc: 'random 4K operations per phase' },
  },
  requires: { root: true, commands: ['qemu-system-x86_64', 'qemu-img'] },
  run: async (ctx) => {
    const { report } = ctx;
    reportInGuest(report, await inGuest(ctx));
    const s = await coldWarm(ctx);
    report.section('create → first command, layers behind S3 (s3rver on loopback)');
    report.samples(
      'cold (empty chunk cache, first create after node start)',
      s.cold.map((x) => x.ms),
    );
    report.samples(
      'warm (chunks cached)',
      s.warm.map((x) => x.ms),
    );
    report.samples(
      'fetched from S3, cold create',
      s.cold.map((x) => x.fetched / MiB),
      'MiB',
    );
    report.samples(
      'fetched from S3, warm create',
      s.warm.map((x) => x.fetched / MiB),
      'MiB',
    );
    report.value('node start, first (imports the base layer into S3)', s.startMs[0], 'ms');
    report.value('node start, restart (layer found)', s.startMs[1], 'ms');
    const cold = percentile(
      s.cold.map((x) => x.ms),
      50,
    );
    report.ratio(
      'cold / warm create (p50)',
      cold,
      percentile(
        s.warm.map((x) => x.ms),
        50,
      ),
    );
  },
});
