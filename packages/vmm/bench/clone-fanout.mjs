#!/usr/bin/env node
/**
 * Fan-out under the qemu driver alone: one template VM (512 MiB, envd
 * stand-in) is booted and snapshotted; then 1, 4 and 16 clones are
 * restored from it at once, each in its own namespace, and timed until
 * every clone's envd answers /health. Reports the time per round and per
 * clone, the host memory of the clones (Pss shares the template's pages
 * among them) and ratios to the first round; never pass/fail. The
 * node-level view: bench/fork.mjs.
 *
 *   node packages/vmm/bench/clone-fanout.mjs [--quick] [--counts 1,4,16]
 *
 * Needs root, QEMU, the guest package built; AENV_TEST_CACHE keeps the
 * guest artifacts between runs.
 *
 * @module
 */
import { join } from 'node:path';
import { runBench } from '../../../bench/lib/bench-main.mjs';
import { openBench, toMiB } from './bench-kit.mjs';

async function round(kit, spaces, disk, n) {
  const disks = await Promise.all(
    spaces.slice(0, n).map((_, i) => kit.overlay(`f${n}-${i}.qcow2`, disk, 'qcow2')),
  );
  const wall = Date.now();
  const t = performance.now();
  const clones = await Promise.all(
    disks.map((d, i) => kit.restore(`f${n}-${i}`, join(kit.work, 'template'), d, spaces[i])),
  );
  const runningMs = performance.now() - t;
  const healthy = await Promise.all(spaces.slice(0, n).map((ns) => kit.healthy(ns)));
  const healthyMs = Math.max(...healthy) - wall;
  const mem = await Promise.all(clones.map((c) => kit.memory(c.pid)));
  for (const c of clones) await c.stop();
  return { runningMs, healthyMs, pss: mem.map((m) => toMiB(m.pss)) };
}

await runBench({
  name: 'vmm-clone-fanout',
  title: 'qemu driver alone: N clones of one snapshot restored at once (envd stand-in)',
  options: { counts: { default: [1, 4, 16], quick: [1, 2], doc: 'clones per round' } },
  requires: { root: true, commands: ['qemu-system-x86_64', 'qemu-img'] },
  run: async (ctx) => {
    const { report, params } = ctx;
    const kit = await openBench(ctx, 'fan');
    report.note(`${kit.choice.reason}; 512 MiB guests`);
    const spaces = [];
    for (let i = 0; i < Math.max(...params.counts); i++) spaces.push(await kit.netns(i));
    const disk = await kit.overlay('template.qcow2', kit.art.baseImage, 'raw');
    const template = await kit.boot('template', 512, disk, spaces[0]);
    await template.pause();
    await template.snapshot({ dir: join(kit.work, 'template') });
    const rows = [];
    for (const n of params.counts) {
      const r = await round(kit, spaces, disk, n);
      rows.push({ n, ...r });
      report.section(`${n} clones at once`);
      report.value('all running', r.runningMs, 'ms');
      report.value('all healthy', r.healthyMs, 'ms');
      report.value('per clone (all healthy / n)', r.healthyMs / n, 'ms');
      report.samples('Pss per clone', r.pss, 'MiB');
      ctx.progress(`${n} clones: all healthy ${r.healthyMs.toFixed(0)} ms`);
    }
    const [first] = rows;
    for (const r of rows.slice(1)) {
      report.ratio(
        `per clone, ${r.n} / ${first.n} clones`,
        r.healthyMs / r.n,
        first.healthyMs / first.n,
      );
    }
  },
});
