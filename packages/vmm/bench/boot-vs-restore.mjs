#!/usr/bin/env node
/**
 * Cold boot vs. snapshot restore of the same guest under the qemu driver
 * alone, each measured to envd answering GET /health (204) from inside the
 * VM's network namespace; never pass/fail. Uses the envd stand-in of the
 * vmm test fixtures, or the real envd with AENV_BENCH_ENVD=real. The
 * node-level view: bench/create.mjs.
 *
 *   node packages/vmm/bench/boot-vs-restore.mjs [--quick] [--boots 3] [--restores 5]
 *
 * Needs root, QEMU, the guest package built; AENV_TEST_CACHE keeps the
 * guest artifacts between runs.
 *
 * @module
 */
import { join } from 'node:path';
import { runBench } from '../../../bench/lib/bench-main.mjs';
import { openBench } from './bench-kit.mjs';

await runBench({
  name: 'vmm-boot-vs-restore',
  title: 'qemu driver alone: cold boot vs. restore of the same guest, to envd healthy',
  options: {
    boots: { default: 3, quick: 1, doc: 'cold boots' },
    restores: { default: 5, quick: 1, doc: 'restores of the last boot' },
  },
  requires: { root: true, commands: ['qemu-system-x86_64', 'qemu-img'] },
  run: async (ctx) => {
    const { report, params } = ctx;
    const kit = await openBench(ctx, 'bvr', {}, process.env.AENV_BENCH_ENVD === 'real');
    report.note(`${kit.choice.reason}, envd ${kit.art.envdVersion}`);
    const ns = await kit.netns(0);
    const bootMs = [];
    let last;
    let lastDisk;
    for (let i = 0; i < params.boots; i++) {
      lastDisk = await kit.overlay(`b${i}.qcow2`, kit.art.baseImage, 'raw');
      const t = Date.now();
      last = await kit.boot(`b${i}`, 512, lastDisk, ns); // returns once /health answered
      bootMs.push(Date.now() - t);
      if (i < params.boots - 1) await last.stop();
    }
    await last.pause();
    await last.snapshot({ dir: join(kit.work, 'snap') });
    const restoreMs = [];
    for (let i = 0; i < params.restores; i++) {
      const disk = await kit.overlay(`r${i}.qcow2`, lastDisk, 'qcow2');
      const t = Date.now();
      const vm = await kit.restore(`r${i}`, join(kit.work, 'snap'), disk, ns);
      restoreMs.push((await kit.healthy(ns)) - t);
      await vm.stop();
    }
    const boot = report.samples('cold boot → envd healthy', bootMs);
    const restore = report.samples('restore → envd healthy', restoreMs);
    report.ratio('boot / restore (p50)', boot.p50, restore.p50);
  },
});
