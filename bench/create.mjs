#!/usr/bin/env node
/**
 * Create latency from the base template through the node API, with the
 * node's per-stage breakdown, beside what the same host does without the
 * node, all in one run:
 *
 * - create, no pool (`pool.low=0`: every create restores on the spot) and
 *   pooled (a prepared restore waits; each create waits until the pool is
 *   refilled and idle, the steady state of a node that is not saturated);
 * - the vmm driver's own restore of the same template snapshot (no API,
 *   no storage engine, no `/init`): the node's overhead is create / this;
 * - a cold boot of the same image through the API (a disk-only pause
 *   resumes by booting);
 * - a plain QEMU boot of the same kernel to a READY line (the floor of any
 *   boot here).
 *
 *   node bench/create.mjs [--quick] [--runs 6] [--out FILE]
 *
 * Needs root (network slots) and a built repo; guest artifacts come from
 * $AENV_ARTIFACTS_DIR (default /var/tmp/aenv-test-cache).
 *
 * @module
 */
import { prepareGuestArtifacts } from '@aenv/guest';
import { runBench } from './lib/bench-main.mjs';
import { BareRestorer, bareQemuBoot, miniInitramfs } from './lib/bare-vmm.mjs';
import { artifactsDir, startBenchNode } from './lib/bench-node.mjs';
import { describeMachine } from './lib/machine.mjs';
import { stageMetricsDelta } from './lib/stage-metrics.mjs';
import { percentile } from './lib/stats.mjs';

const POOL_HIGH = 2;
const NODE = { name: 'node', prefix: 'bcreate', addressPool: '10.240.0.0/24' };
const STAGES = ['vmmSpawn', 'kernelToInit', 'initToEnvdReady', 'guestToEnvdReady', 'envdInit'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the pool is full and idle (`high` ready, nothing building):
 * a refill running during the create would compete for the same CPUs.
 */
async function poolFull(node, high) {
  for (let i = 0; i < 1200; i++) {
    const level = node.poolLevel();
    if (level !== undefined && level.ready >= high && level.building === 0) return;
    await sleep(100);
  }
  throw new Error(`the restore pool never filled: ${JSON.stringify(node.poolLevel())}`);
}

/** `runs` creates, each killed before the next: wall ms and the node's stage timings. */
async function creates(ctx, node, label, pooled) {
  const out = [];
  for (let i = 0; i < ctx.params.runs; i++) {
    if (pooled) await poolFull(node, POOL_HIGH);
    const { id, ms } = await node.create();
    out.push({ wall: ms, ...node.node.orchestrator.get(id).createTimings });
    await node.kill(id);
    ctx.progress(`${label} create ${i + 1}/${ctx.params.runs}: ${ms.toFixed(0)} ms`);
  }
  return out;
}

function reportCreates(report, label, samples) {
  report.samples(
    `create, ${label} (API, end to end)`,
    samples.map((s) => s.wall),
  );
  for (const k of STAGES) {
    const xs = samples.map((s) => s[k]).filter((x) => x !== undefined);
    if (xs.length > 0) report.samples(`  stage ${k}`, xs);
  }
}

/** Cold boots through the API: a disk-only pause, then a resume that boots. */
async function coldBoots(ctx, node, count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const { id } = await node.create();
    await node.api('POST', `/sandboxes/${id}/pause`, { memory: false });
    const r = await node.api('POST', `/sandboxes/${id}/resume`, { timeout: 600 });
    out.push({ wall: r.ms, ...node.node.orchestrator.get(id).createTimings });
    await node.kill(id);
    ctx.progress(`cold boot ${i + 1}/${count}: ${r.ms.toFixed(0)} ms`);
  }
  return out;
}

function reportStageMetrics(report, label, metrics) {
  for (const [op, stages] of Object.entries(metrics)) {
    for (const [stage, m] of Object.entries(stages)) {
      report.value(`${label}: ${op} ${stage}, mean of ${m.count}`, m.meanMs, 'ms', {
        count: m.count,
      });
    }
  }
}

async function noPoolPhase(ctx) {
  const { report } = ctx;
  const node = await startBenchNode(ctx, {
    ...NODE,
    env: { AENV_POOL_LOW: '0', AENV_POOL_HIGH: '0' },
  });
  const before = await node.stageMetrics();
  const plain = await creates(ctx, node, 'no pool', false);
  const createMetrics = stageMetricsDelta(before, await node.stageMetrics());
  const bare = await BareRestorer.open(ctx, node, {
    prefix: 'bcrbare',
    addressPool: '10.240.1.0/24',
  });
  const restores = [];
  for (let i = 0; i < ctx.params.runs; i++) {
    restores.push(await bare.restore());
    ctx.progress(
      `bare restore ${i + 1}/${ctx.params.runs}: ${restores.at(-1).healthyMs.toFixed(0)} ms`,
    );
  }
  const boots = await coldBoots(ctx, node, ctx.params.boots);
  await node.close();
  report.section('create from the base template');
  reportCreates(report, 'no pool', plain);
  return { plain, restores, boots, createMetrics };
}

async function pooledPhase(ctx) {
  const node = await startBenchNode(ctx, {
    ...NODE,
    // low = high: every take starts a refill (the pool refills only below
    // its low watermark), so each create finds the same full, idle pool.
    env: { AENV_POOL_LOW: String(POOL_HIGH), AENV_POOL_HIGH: String(POOL_HIGH) },
  });
  if (node.poolLevel() === undefined) {
    ctx.report.skip('pooled creates', 'this node has no restore pool');
    await node.close();
    return [];
  }
  const pooled = await creates(ctx, node, 'pooled', true);
  await node.close();
  reportCreates(ctx.report, 'pooled', pooled);
  return pooled;
}

async function plainQemu(ctx, count) {
  const machine = await describeMachine();
  const { kernel } = await prepareGuestArtifacts({ cacheDir: artifactsDir() });
  const initrd = await miniInitramfs(ctx.work);
  const accel = machine.virtualization.mode === 'kvm' ? 'kvm' : 'tcg';
  const out = [];
  for (let i = 0; i < count; i++) out.push(await bareQemuBoot({ kernel, initrd, accel }));
  return out;
}

await runBench({
  name: 'create',
  title: 'create from a template vs. cold boot vs. the bare VMM restore of the same snapshot',
  options: {
    runs: { default: 6, quick: 2, doc: 'creates per variant' },
    boots: { default: 3, quick: 1, doc: 'cold boots (API) and plain QEMU boots' },
  },
  requires: { root: true, commands: ['qemu-system-x86_64', 'qemu-img'] },
  run: async (ctx) => {
    const { report } = ctx;
    const a = await noPoolPhase(ctx);
    const pooled = await pooledPhase(ctx);
    const qemu = await plainQemu(ctx, ctx.params.boots);
    report.section('baselines');
    report.samples(
      'vmm driver restore of the same snapshot → running',
      a.restores.map((r) => r.runningMs),
    );
    report.samples(
      'vmm driver restore of the same snapshot → envd healthy',
      a.restores.map((r) => r.healthyMs),
    );
    report.samples(
      'cold boot of the same image (API resume of a disk-only pause)',
      a.boots.map((b) => b.wall),
    );
    report.samples('plain QEMU boot, same kernel → READY (busybox initramfs)', qemu);
    report.section('node stage metrics (GET /metrics, creates without pool)');
    reportStageMetrics(report, 'node', a.createMetrics);
    const p50 = (xs) => percentile(xs, 50);
    const plainP50 = p50(a.plain.map((s) => s.wall));
    const pooledP50 = p50(pooled.map((s) => s.wall));
    const bareP50 = p50(a.restores.map((r) => r.healthyMs));
    report.ratio(
      'create no pool / bare VMM restore (p50)',
      plainP50,
      bareP50,
      "the node's overhead",
    );
    report.ratio('create pooled / bare VMM restore (p50)', pooledP50, bareP50);
    report.ratio('create no pool / pooled (p50)', plainP50, pooledP50);
    report.ratio(
      'cold boot (API) / create no pool (p50)',
      p50(a.boots.map((b) => b.wall)),
      plainP50,
    );
    report.ratio('plain QEMU boot to READY / create pooled (p50)', p50(qemu), pooledP50);
  },
});
