#!/usr/bin/env node
// Benchmark: what pause (snapshot, the VM ends into it) and resume (restore)
// cost under the qemu driver, against guest RAM size and against what the
// guest dirtied. For each RAM size one VM is booted and snapshotted (the
// template); then for each dirty size: restore a clone, write that many MiB
// into its tmpfs, pause + snapshot it (base hard link + RAM diff), restore
// that snapshot. Prints a table and the ratios to the first row; never
// pass/fail (these machines are noisy: compare within one run).
//
//   npm run build && node packages/vmm/bench/snapshot-cost.mjs [plan]
//
// plan: `size:dirty,dirty;size:dirty` in MiB. Default
// `256:0,16,64;1024:0,16,64;2048:16`. Needs root, QEMU, the guest package
// built; AENV_TEST_CACHE keeps the guest artifacts between runs.
import { join } from 'node:path';
import { dirtyCommand, mib, ms, openBench } from './bench-kit.mjs';

const plan = (process.argv[2] ?? '256:0,16,64;1024:0,16,64;2048:16').split(';').map((p) => {
  const [size, dirty] = p.split(':');
  return { size: Number(size), dirty: dirty.split(',').map(Number) };
});

const kit = await openBench('snap');
const rows = [];
try {
  const ns = await kit.netns(0);
  for (const { size, dirty } of plan) {
    const disk = await kit.overlay(`t${size}.qcow2`, kit.art.baseImage, 'raw');
    const template = await kit.boot(`t${size}`, size, disk, ns);
    await template.pause();
    let t = performance.now();
    await template.snapshot({ dir: join(kit.work, `tpl${size}`) });
    const templateMs = performance.now() - t;
    for (const d of dirty) {
      const id = `c${size}-${d}`;
      const cdisk = await kit.overlay(`${id}.qcow2`, disk, 'qcow2');
      const clone = await kit.restore(id, join(kit.work, `tpl${size}`), cdisk, ns);
      await kit.healthy(ns);
      await kit.exec(ns, dirtyCommand(d));
      await clone.pause();
      t = performance.now();
      const m = await clone.snapshot({ dir: join(kit.work, `snap-${id}`) });
      const pauseMs = performance.now() - t;
      t = performance.now();
      const wall = Date.now();
      const resumed = await kit.restore(`r${id}`, join(kit.work, `snap-${id}`), cdisk, ns);
      const runningMs = performance.now() - t;
      const healthyMs = (await kit.healthy(ns)) - wall;
      await resumed.stop();
      rows.push({
        size,
        dirty: d,
        templateMs,
        pauseMs,
        diff: m.memory.diff?.bytes ?? 0,
        runningMs,
        healthyMs,
      });
      console.log(
        `RAM ${size} MiB, dirtied ${d} MiB: pause ${ms(pauseMs)} (diff ${mib(m.memory.diff?.bytes ?? 0)}), resume running ${ms(runningMs)}, healthy ${ms(healthyMs)}`,
      );
    }
    await template.stop();
  }
} finally {
  await kit.close();
}

const first = rows[0];
console.log(`\n${kit.choice.reason}; envd stand-in; medians are single runs (noisy host)`);
console.log(
  'RAM MiB | dirtied MiB | template snapshot | pause (snapshot) | RAM diff | resume → running | resume → healthy | pause ratio | resume ratio',
);
for (const r of rows) {
  console.log(
    [
      String(r.size).padStart(7),
      String(r.dirty).padStart(11),
      ms(r.templateMs).padStart(17),
      ms(r.pauseMs).padStart(16),
      mib(r.diff).padStart(8),
      ms(r.runningMs).padStart(16),
      ms(r.healthyMs).padStart(16),
      `${(r.pauseMs / first.pauseMs).toFixed(2)}x`.padStart(11),
      `${(r.runningMs / first.runningMs).toFixed(2)}x`.padStart(12),
    ].join(' | '),
  );
}
