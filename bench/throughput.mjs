#!/usr/bin/env node
/**
 * Throughput of one node:
 *
 * 1. Creates per second: C creates sent at once (each until it answers a
 *    command), against one batch create of C (`POST /sandboxes` with
 *    `count`, aenv's extension) and C creates one after another.
 * 2. Concurrent command streams: `commands.run('true')` of the real e2b
 *    SDK at 1, 16, 64 and 200 in parallel, spread over a few sandboxes,
 *    through the node's proxy against the same SDK talking to each
 *    guest's envd directly (no proxy): per-command latency p50/p90/p99
 *    and commands per second at each level.
 *
 *   node bench/throughput.mjs [--quick] [--creates 4] [--levels 1,16,64,200]
 *                             [--sandboxes 2] [--min-samples 32]
 *
 * Needs root and a built repo; artifacts from $AENV_ARTIFACTS_DIR.
 *
 * @module
 */
import { Sandbox } from 'e2b';
import { runBench } from './lib/bench-main.mjs';
import { BENCH_CREATE, startBenchNode } from './lib/bench-node.mjs';
import { percentile } from './lib/stats.mjs';

const TIMEOUT = { timeoutMs: 600_000, requestTimeoutMs: 600_000 };

async function concurrentCreates(node, c) {
  const t0 = performance.now();
  const ids = await Promise.all(
    Array.from({ length: c }, async () => {
      const { id } = await node.create();
      await node.answer(id);
      return id;
    }),
  );
  const ms = performance.now() - t0;
  for (const id of ids) await node.kill(id);
  return ms;
}

async function batchCreate(node, c) {
  const t0 = performance.now();
  const { json } = await node.api('POST', '/v2/sandboxes', { ...BENCH_CREATE, count: c });
  const ids = json.filter((r) => r.error === undefined).map((r) => r.sandbox.sandboxID);
  const failed = json.filter((r) => r.error !== undefined).map((r) => r.error);
  if (ids.length === 0) throw new Error(`batch create: all failed: ${failed[0]?.message}`);
  await Promise.all(ids.map((id) => node.answer(id)));
  const ms = performance.now() - t0;
  for (const id of ids) await node.kill(id);
  return { ms, failed };
}

async function sequentialCreates(node, c) {
  const t0 = performance.now();
  const ids = [];
  for (let i = 0; i < c; i++) {
    const { id } = await node.create();
    await node.answer(id);
    ids.push(id);
  }
  const ms = performance.now() - t0;
  for (const id of ids) await node.kill(id);
  return ms;
}

/**
 * Rounds of `level` parallel `commands.run('true')` over `handles` until
 * at least `minSamples` commands ran: per-command ms and commands/s.
 */
async function streams(handles, level, minSamples) {
  const samples = [];
  const t0 = performance.now();
  while (samples.length < Math.max(level, minSamples)) {
    const round = await Promise.all(
      Array.from({ length: level }, async (_, i) => {
        const t = performance.now();
        const r = await handles[i % handles.length].commands.run('true', TIMEOUT);
        if (r.exitCode !== 0) throw new Error(`commands.run('true') exited ${r.exitCode}`);
        return performance.now() - t;
      }),
    );
    samples.push(...round);
  }
  return { samples, perSecond: samples.length / ((performance.now() - t0) / 1000) };
}

async function commandStreams(ctx, node) {
  const { report, params } = ctx;
  const viaProxy = [];
  for (let i = 0; i < params.sandboxes; i++) {
    viaProxy.push(await Sandbox.create('base', { ...node.sdk, ...TIMEOUT }));
  }
  const direct = [];
  for (const s of viaProxy) {
    const opts = { ...node.sdk, sandboxUrl: node.envdUrl(s.sandboxId), ...TIMEOUT };
    direct.push(await Sandbox.connect(s.sandboxId, opts));
  }
  for (const h of [...viaProxy, ...direct]) await h.commands.run('true', TIMEOUT); // warm
  for (const level of params.levels) {
    report.section(`${level} in parallel over ${params.sandboxes} sandboxes`);
    const p = await streams(viaProxy, level, params['min-samples']);
    const d = await streams(direct, level, params['min-samples']);
    report.samples(`commands.run('true') through the proxy`, p.samples);
    report.samples(`commands.run('true') to envd directly`, d.samples);
    report.value('commands/s through the proxy', p.perSecond, '/s');
    report.value('commands/s to envd directly', d.perSecond, '/s');
    report.ratio(
      `proxy / direct at ${level} (p50)`,
      percentile(p.samples, 50),
      percentile(d.samples, 50),
    );
    report.ratio(
      `proxy / direct at ${level} (p99)`,
      percentile(p.samples, 99),
      percentile(d.samples, 99),
    );
    ctx.progress(`${level} parallel: proxy p50 ${percentile(p.samples, 50).toFixed(0)} ms`);
  }
  for (const s of viaProxy) await s.kill();
}

await runBench({
  name: 'throughput',
  title: 'creates per second, and concurrent commands through the proxy vs. envd directly',
  options: {
    creates: { default: 4, quick: 2, doc: 'creates sent at once' },
    levels: { default: [1, 16, 64, 200], quick: [1, 4], doc: 'commands in parallel' },
    sandboxes: { default: 2, quick: 1, doc: 'sandboxes the commands are spread over' },
    'min-samples': { default: 32, quick: 4, doc: 'commands per level at least (rounds repeat)' },
  },
  requires: { root: true, commands: ['qemu-system-x86_64'] },
  run: async (ctx) => {
    const { report, params } = ctx;
    const c = params.creates;
    const node = await startBenchNode(ctx, {
      name: 'node',
      prefix: 'bthru',
      addressPool: '10.240.12.0/24',
      env: { AENV_MAX_SANDBOXES: String(c + params.sandboxes + 4) },
    });
    report.section(`${c} creates, each until it answers a command`);
    const at = await concurrentCreates(node, c);
    const { ms: batch, failed } = await batchCreate(node, c);
    for (const e of failed)
      report.note(`batch create: a sandbox failed: ${e.error_code} ${e.message}`);
    const seq = await sequentialCreates(node, c);
    report.value(`${c} creates at once`, at, 'ms');
    report.value(`batch create of ${c}`, batch, 'ms');
    report.value(`${c} creates one after another`, seq, 'ms');
    report.value('creates/s, at once', c / (at / 1000), '/s');
    report.value('creates/s, batch', c / (batch / 1000), '/s');
    report.value('creates/s, one after another', c / (seq / 1000), '/s');
    report.ratio('creates/s at once / one after another', seq, at);
    report.ratio('creates/s batch / one after another', seq, batch);
    ctx.progress('creates measured');
    await commandStreams(ctx, node);
  },
});
