#!/usr/bin/env node
/**
 * What pause (snapshot; the VM ends into it) and resume (restore) cost
 * under the qemu driver alone, against guest RAM size and against what the
 * guest dirtied. For each RAM size one VM is booted and snapshotted (the
 * template); then for each dirty size: restore a clone, write that many
 * MiB into its tmpfs, pause + snapshot it (base hard link + RAM diff),
 * restore that snapshot. Prints a table and ratios to the first cell;
 * never pass/fail. The node-level view of the same: bench/lifecycle.mjs.
 *
 *   node packages/vmm/bench/snapshot-cost.mjs [--quick] [--plan '256:0,16,64;2048:0,64']
 *
 * plan: `size:dirty,dirty;size:dirty` in MiB. Needs root, QEMU, the guest
 * package built; AENV_TEST_CACHE keeps the guest artifacts between runs.
 *
 * @module
 */
import { join } from 'node:path';
import { runBench } from '../../../bench/lib/bench-main.mjs';
import { dirtyCommand, openBench, toMiB } from './bench-kit.mjs';

function parsePlan(text) {
  return text.split(';').map((p) => {
    const [size, dirty] = p.split(':');
    return { size: Number(size), dirty: dirty.split(',').map(Number) };
  });
}

/** Clone of the template → dirty → pause+snapshot → restore of that snapshot. */
async function cycle(kit, ns, size, d, disk) {
  const id = `c${size}-${d}`;
  const cdisk = await kit.overlay(`${id}.qcow2`, disk, 'qcow2');
  const clone = await kit.restore(id, join(kit.work, `tpl${size}`), cdisk, ns);
  await kit.healthy(ns);
  await kit.exec(ns, dirtyCommand(d));
  await clone.pause();
  let t = performance.now();
  const m = await clone.snapshot({ dir: join(kit.work, `snap-${id}`) });
  const pauseMs = performance.now() - t;
  t = performance.now();
  const wall = Date.now();
  const resumed = await kit.restore(`r${id}`, join(kit.work, `snap-${id}`), cdisk, ns);
  const runningMs = performance.now() - t;
  const healthyMs = (await kit.healthy(ns)) - wall;
  await resumed.stop();
  return { pauseMs, diff: toMiB(m.memory.diff?.bytes ?? 0), runningMs, healthyMs };
}

await runBench({
  name: 'vmm-snapshot-cost',
  title: 'qemu driver alone: pause/resume vs. guest RAM size and dirtied MiB (envd stand-in)',
  options: {
    plan: {
      default: '256:0,16,64;2048:0,64',
      quick: '256:0,16',
      doc: 'RAM:dirty,dirty;RAM:dirty in MiB',
    },
  },
  requires: { root: true, commands: ['qemu-system-x86_64', 'qemu-img'] },
  run: async (ctx) => {
    const { report } = ctx;
    const kit = await openBench(ctx, 'snap');
    report.note(kit.choice.reason);
    const ns = await kit.netns(0);
    const cells = [];
    for (const { size, dirty } of parsePlan(ctx.params.plan)) {
      const disk = await kit.overlay(`t${size}.qcow2`, kit.art.baseImage, 'raw');
      const template = await kit.boot(`t${size}`, size, disk, ns);
      await template.pause();
      const t = performance.now();
      await template.snapshot({ dir: join(kit.work, `tpl${size}`) });
      report.section(`RAM ${size} MiB`);
      report.value('template snapshot', performance.now() - t, 'ms');
      for (const d of dirty) {
        const c = await cycle(kit, ns, size, d, disk);
        cells.push({ size, d, ...c });
        report.value(`${d} MiB dirtied: pause (snapshot)`, c.pauseMs, 'ms');
        report.value(`${d} MiB dirtied: RAM diff`, c.diff, 'MiB');
        report.value(`${d} MiB dirtied: resume → running`, c.runningMs, 'ms');
        report.value(`${d} MiB dirtied: resume → healthy`, c.healthyMs, 'ms');
        ctx.progress(`RAM ${size} MiB, ${d} MiB dirtied: pause ${c.pauseMs.toFixed(0)} ms`);
      }
      await template.stop();
    }
    const [first] = cells;
    for (const c of cells.slice(1)) {
      report.ratio(
        `pause RAM ${c.size}/${c.d} MiB / RAM ${first.size}/${first.d} MiB`,
        c.pauseMs,
        first.pauseMs,
      );
      report.ratio(
        `resume RAM ${c.size}/${c.d} MiB / RAM ${first.size}/${first.d} MiB`,
        c.runningMs,
        first.runningMs,
      );
    }
  },
});
