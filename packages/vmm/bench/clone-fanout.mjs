#!/usr/bin/env node
// Benchmark: fan-out. One template VM (512 MiB, envd stand-in) is booted and
// snapshotted; then 1, 4 and 16 clones are restored from it at once, each in
// its own namespace, and timed until every clone's envd answers /health.
// Prints the time per round, per clone, the host memory of the clones (Pss
// shares the template's pages among them) and ratios to the first round;
// never pass/fail.
//
//   npm run build && node packages/vmm/bench/clone-fanout.mjs [counts=1,4,16]
//
// Needs root, QEMU, the guest package built; AENV_TEST_CACHE keeps the guest
// artifacts between runs.
import { join } from 'node:path';
import { mib, ms, openBench } from './bench-kit.mjs';

const counts = (process.argv[2] ?? '1,4,16').split(',').map(Number);
const kit = await openBench('fan');
const rows = [];
try {
  const spaces = [];
  for (let i = 0; i < Math.max(...counts); i++) spaces.push(await kit.netns(i));
  const disk = await kit.overlay('template.qcow2', kit.art.baseImage, 'raw');
  const template = await kit.boot('template', 512, disk, spaces[0]);
  await template.pause();
  await template.snapshot({ dir: join(kit.work, 'template') });
  for (const n of counts) {
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
    const pss = mem.reduce((a, m) => a + m.pss, 0);
    rows.push({ n, runningMs, healthyMs, pss });
    console.log(`${n} clones: all running ${ms(runningMs)}, all healthy ${ms(healthyMs)}`);
    for (const c of clones) await c.stop();
  }
} finally {
  await kit.close();
}

const first = rows[0];
console.log(`\n${kit.choice.reason}; 512 MiB guests, envd stand-in; single runs (noisy host)`);
console.log(
  'clones | all running | all healthy | per clone | Pss total | Pss per clone | healthy ratio | per-clone ratio',
);
for (const r of rows) {
  console.log(
    [
      String(r.n).padStart(6),
      ms(r.runningMs).padStart(11),
      ms(r.healthyMs).padStart(11),
      ms(r.healthyMs / r.n).padStart(9),
      mib(r.pss).padStart(9),
      mib(r.pss / r.n).padStart(13),
      `${(r.healthyMs / first.healthyMs).toFixed(2)}x`.padStart(13),
      `${(r.healthyMs / r.n / (first.healthyMs / first.n)).toFixed(2)}x`.padStart(15),
    ].join(' | '),
  );
}
