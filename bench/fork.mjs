#!/usr/bin/env node
/**
 * Fork vs. create, on one node in one run: a running sandbox is forked
 * into 1, 4, 16 and 32 children (timed until every child answers a
 * command through the proxy), against the same number of sequential
 * creates from the template (each also until it answers, then killed,
 * untimed). Then the memory of the largest fork's idle children: Pss of
 * each child's VMM process (clones of one fork snapshot share its clean
 * pages).
 *
 *   node bench/fork.mjs [--quick] [--counts 1,4,16,32]
 *
 * Needs root and a built repo; artifacts from $AENV_ARTIFACTS_DIR.
 *
 * @module
 */
import { runBench } from './lib/bench-main.mjs';
import { startBenchNode } from './lib/bench-node.mjs';
import { toMiB } from './lib/host-memory.mjs';
import { stageMetricsDelta } from './lib/stage-metrics.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Forks `parent` into `n` and waits for every child that started to
 * answer: `{ ms, children, failed }`. A child that fails is a result (how
 * a fork of this size fails on this host), not a crash of the benchmark.
 */
async function forkInto(node, parent, n) {
  const t0 = performance.now();
  const { json } = await node.api('POST', `/sandboxes/${parent}/fork`, { count: n });
  const children = json.filter((r) => r.error === undefined).map((r) => r.sandbox.sandboxID);
  const failed = json.filter((r) => r.error !== undefined).map((r) => r.error);
  await Promise.all(children.map((c) => node.answer(c)));
  return { ms: performance.now() - t0, children, failed };
}

/**
 * `n` creates one after another, each until it answers: ms of all (the
 * kills are not timed). Each sandbox is killed once it answered: n idle
 * TCG guests kept alive make the later creates slower for a reason that
 * has nothing to do with creating (a full run of 32 once reached load 65
 * and the benchmark's time cap).
 */
async function sequentialCreates(node, n) {
  let ms = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const { id } = await node.create();
    await node.answer(id);
    ms += performance.now() - t0;
    await node.kill(id);
  }
  return ms;
}

async function childMemory(node, children) {
  await sleep(2000);
  const pss = [];
  for (const c of children) pss.push(toMiB((await node.memory(c)).pss));
  return pss;
}

await runBench({
  name: 'fork',
  title: 'fork into 1/4/16/32 children vs. as many sequential creates',
  options: { counts: { default: [1, 4, 16, 32], quick: [1, 2], doc: 'children per fork' } },
  requires: { root: true, commands: ['qemu-system-x86_64'] },
  run: async (ctx) => {
    const { report, params } = ctx;
    const max = Math.max(...params.counts);
    const node = await startBenchNode(ctx, {
      name: 'node',
      prefix: 'bfork',
      addressPool: '10.240.8.0/24',
      env: { AENV_MAX_SANDBOXES: String(max + 8), AENV_MAX_FORK_COUNT: String(Math.min(100, max)) },
    });
    const { id: parent } = await node.create();
    await node.answer(parent);
    const before = await node.stageMetrics();
    let pss = [];
    for (const n of params.counts) {
      const fork = await forkInto(node, parent, n);
      if (n === max) pss = await childMemory(node, fork.children);
      for (const c of fork.children) await node.kill(c);
      const seq = await sequentialCreates(node, n);
      ctx.progress(`${n} children: fork ${fork.ms.toFixed(0)} ms, creates ${seq.toFixed(0)} ms`);
      report.section(`${n} children`);
      report.value(`fork into ${n}, until all answer`, fork.ms, 'ms');
      report.value(`${n} sequential creates, until each answers`, seq, 'ms');
      report.value(`fork, per child`, fork.ms / n, 'ms');
      if (fork.failed.length > 0) {
        report.value('children that failed to start', fork.failed.length, 'children');
        const why = [
          ...new Set(
            fork.failed.map((e) => `${e.error_code ?? e.code ?? ''} ${e.message ?? ''}`.trim()),
          ),
        ];
        report.note(`fork into ${n}: ${fork.failed.length} children failed: ${why.join('; ')}`);
      }
      report.ratio(`${n} sequential creates / fork into ${n}`, seq, fork.ms);
    }
    const metrics = stageMetricsDelta(before, await node.stageMetrics());
    await node.kill(parent);
    report.section(`idle children of the ${max}-child fork`);
    report.samples('Pss per child VMM process', pss, 'MiB');
    report.value('guest RAM per child', node.config.sandbox.memoryMiB, 'MiB');
    const ckpt = metrics.fork?.checkpoint;
    if (ckpt !== undefined)
      report.value(`node: fork checkpoint, mean of ${ckpt.count}`, ckpt.meanMs, 'ms');
  },
});
