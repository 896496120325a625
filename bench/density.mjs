#!/usr/bin/env node
/**
 * Density: how many idle sandboxes a GiB of host memory holds, and how many
 * one node holds before creates fail.
 *
 * 1. Clones vs. independent boots: N sandboxes created from the template
 *    (restores mapping one snapshot copy-on-write) against N sandboxes that
 *    each cold-booted their own RAM (create, disk-only pause, resume boots);
 *    after they idle, the Pss and Rss of every VMM process.
 * 2. Fill: creates one at a time (each done when its envd took `/init`),
 *    while the node holds the previous ones idle, until a create fails (its
 *    error is the "how"), the node's configured limit (`--cap`, set as
 *    `sandbox.maxSandboxes`; one more create shows the limit's answer), or
 *    a guard: the host's MemAvailable below `--margin-mib`, the load
 *    average the fill added above `--max-load-per-core` (the fill first
 *    waits up to 60 s for the load to settle), or a create slower than
 *    `--max-create-ms` (the benchmark stops itself; it never takes the
 *    machine down). Under TCG, idle guests still cost CPU (timer ticks,
 *    envd), so the CPU guard is what ends the fill on a small host.
 *
 *   node bench/density.mjs [--quick] [--count 4] [--cap 32] [--margin-mib 3072]
 *
 * Needs root and a built repo; artifacts from $AENV_ARTIFACTS_DIR.
 *
 * @module
 */
import { availableParallelism, loadavg } from 'node:os';
import { runBench } from './lib/bench-main.mjs';
import { BENCH_CREATE, startBenchNode } from './lib/bench-node.mjs';
import { memAvailable, toMiB } from './lib/host-memory.mjs';
import { percentile } from './lib/stats.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const IDLE_MS = 5000;
const SETTLE_MS = 60_000;

/**
 * Rss and Pss (MiB) of each sandbox's VMM after idling. (The host's
 * MemAvailable is no measure here: a booted guest's RAM is a file mapping,
 * which the kernel counts as reclaimable page cache.)
 */
async function idleMemory(node, ids) {
  await sleep(IDLE_MS);
  const pss = [];
  const rss = [];
  for (const id of ids) {
    const m = await node.memory(id);
    pss.push(toMiB(m.pss));
    rss.push(toMiB(m.rss));
  }
  return { pss, rss };
}

async function clones(node, n) {
  const ids = [];
  for (let i = 0; i < n; i++) {
    const { id } = await node.create();
    await node.answer(id);
    ids.push(id);
  }
  const m = await idleMemory(node, ids);
  for (const id of ids) await node.kill(id);
  return m;
}

async function boots(node, n) {
  const ids = [];
  for (let i = 0; i < n; i++) {
    const { id } = await node.create();
    await node.api('POST', `/sandboxes/${id}/pause`, { memory: false });
    ids.push(id);
  }
  await Promise.all(
    ids.map((id) => node.api('POST', `/sandboxes/${id}/resume`, { timeout: 3600 })),
  );
  for (const id of ids) await node.answer(id);
  const m = await idleMemory(node, ids);
  for (const id of ids) await node.kill(id);
  return m;
}

function reportMemory(report, label, m) {
  report.samples(`${label}: Pss per VMM process`, m.pss, 'MiB');
  report.samples(`${label}: Rss per VMM process`, m.rss, 'MiB');
  const perGiB = 1024 / percentile(m.pss, 50);
  report.value(`${label}: idle sandboxes per GiB (Pss p50)`, perGiB, 'sandboxes');
  return perGiB;
}

/**
 * Waits (at most `SETTLE_MS`) until the 1-minute load average is under the
 * guard: it lags by a minute, and what ran just before (another benchmark,
 * another engineer's tests) must not end the fill before it starts.
 * Resolves with the load average the fill starts from.
 */
async function settle(ctx) {
  const limit = ctx.params['max-load-per-core'] * availableParallelism();
  const t0 = performance.now();
  while (loadavg()[0] > limit && performance.now() - t0 < SETTLE_MS) await sleep(5000);
  ctx.progress(`fill starts at load average ${loadavg()[0].toFixed(1)}`);
  return loadavg()[0];
}

/**
 * Why the fill must stop before the next create, or undefined. The CPU
 * guard bounds the load the fill added (over `startLoad`), so load from
 * elsewhere neither ends the fill at once nor lets it saturate the host.
 */
async function guard(params, lastCreateMs, startLoad) {
  const { 'margin-mib': marginMiB, 'max-load-per-core': perCore, 'max-create-ms': maxMs } = params;
  const available = toMiB(await memAvailable());
  if (available < marginMiB) {
    return `host MemAvailable ${available.toFixed(0)} MiB below the ${marginMiB} MiB safety margin`;
  }
  const load = loadavg()[0];
  if (load - startLoad > perCore * availableParallelism()) {
    return (
      `host load average ${load.toFixed(1)}, ${(load - startLoad).toFixed(1)} over the fill's start, ` +
      `above the guard (${perCore} per core): CPU, not memory, is full`
    );
  }
  if (lastCreateMs > maxMs) {
    return `the last create took ${(lastCreateMs / 1000).toFixed(1)} s, over the ${maxMs / 1000} s guard`;
  }
  return undefined;
}

/** Creates until failure, the cap or a guard: `{ held, stop, createMs, pss }`. */
async function fill(ctx, node) {
  const ids = [];
  const createMs = [];
  let stop;
  const startLoad = await settle(ctx);
  while (stop === undefined) {
    stop = await guard(ctx.params, createMs.at(-1) ?? 0, startLoad);
    if (stop !== undefined) break;
    const r = await node.api('POST', '/v2/sandboxes', BENCH_CREATE, true);
    if (r.status !== 201) {
      const why = `${r.json?.error_code ?? ''} ${r.json?.message ?? ''}`.trim();
      stop = `create ${ids.length + 1} failed: HTTP ${r.status} ${why}`;
      break;
    }
    ids.push(r.json.sandboxID);
    createMs.push(r.ms);
    if (ids.length % 8 === 0) ctx.progress(`holding ${ids.length} idle sandboxes`);
  }
  await sleep(IDLE_MS);
  const pss = [];
  for (const id of ids) pss.push(toMiB((await node.memory(id)).pss));
  const availableMiB = toMiB(await memAvailable());
  const load = loadavg()[0];
  for (const id of ids) await node.kill(id);
  return { held: ids.length, stop, createMs, pss, availableMiB, load, startLoad };
}

await runBench({
  name: 'density',
  title: 'idle sandboxes per GiB (clones vs. independent boots) and the most one node holds',
  options: {
    count: { default: 4, quick: 2, doc: 'sandboxes per variant in the clone/boot comparison' },
    cap: { default: 32, quick: 4, doc: 'the node limit (sandbox.maxSandboxes) of the fill' },
    'margin-mib': { default: 3072, doc: 'stop the fill when host MemAvailable falls below this' },
    'max-load-per-core': {
      default: 8,
      doc: 'stop the fill when the 1-min load average it added exceeds this per core',
    },
    'max-create-ms': { default: 15000, doc: 'stop the fill after a create that took longer' },
  },
  requires: { root: true, commands: ['qemu-system-x86_64'] },
  run: async (ctx) => {
    const { report, params } = ctx;
    const node = await startBenchNode(ctx, {
      name: 'node',
      prefix: 'bdense',
      addressPool: '10.240.16.0/22',
      env: { AENV_MAX_SANDBOXES: String(params.cap) },
    });
    report.section(`${params.count} idle sandboxes, 512 MiB guests`);
    const c = reportMemory(
      report,
      'clones (create from template)',
      await clones(node, params.count),
    );
    ctx.progress('clones measured');
    const b = reportMemory(report, 'independent boots', await boots(node, params.count));
    report.ratio('sandboxes per GiB, clones / independent boots', c, b);
    const f = await fill(ctx, node);
    report.section(`fill until creates fail (cap ${params.cap})`);
    report.value('idle sandboxes held', f.held, 'sandboxes', { stop: f.stop });
    report.samples('create latency while filling', f.createMs);
    report.samples('Pss per VMM process at the end', f.pss, 'MiB');
    report.value('host MemAvailable at the end', f.availableMiB, 'MiB');
    report.value('host load average (1 min) at the start of the fill', f.startLoad, 'load');
    report.value('host load average (1 min) at the end', f.load, 'load');
    report.note(`fill stopped: ${f.stop}`);
    const firsts = f.createMs.slice(0, 8);
    const lasts = f.createMs.slice(-8);
    report.ratio(
      'create p50, last 8 / first 8 of the fill',
      percentile(lasts, 50),
      percentile(firsts, 50),
    );
  },
});
