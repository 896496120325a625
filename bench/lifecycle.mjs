#!/usr/bin/env node
/**
 * Pause and resume through the node API against guest RAM size and the
 * size of what the guest dirtied, each next to what the VMM alone spent on
 * the same operation (the vmm package's diagnostics events of that very
 * pause or resume) and the RAM diff the pause wrote.
 *
 * For each RAM size a node is started whose base template has that much
 * RAM; for each dirty size a fresh sandbox (the diff is cumulative since
 * the template, so each cell starts clean) writes that many MiB of random
 * data into its tmpfs before every pause, then resumes.
 *
 *   node bench/lifecycle.mjs [--quick] [--runs 3] [--ram 512,2048] [--dirty 0,16,64]
 *
 * Needs root and a built repo; artifacts from $AENV_ARTIFACTS_DIR.
 *
 * @module
 */
import { readManifest } from '@aenv/vmm';
import { runBench } from './lib/bench-main.mjs';
import { startBenchNode } from './lib/bench-node.mjs';
import { toMiB } from './lib/host-memory.mjs';
import { percentile } from './lib/stats.mjs';

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/** Size of the RAM diff of a paused sandbox's snapshot, bytes (0 for a full memory file). */
async function diffBytes(node, id) {
  const { state } = node.node;
  const snap = state.snapshots.get(node.node.orchestrator.get(id).pausedSnapshotId);
  if (snap.dir === undefined) return 0;
  const manifest = await readManifest(snap.dir);
  return manifest.memory?.diff?.bytes ?? 0;
}

/** `runs` dirty → pause → resume cycles of one fresh sandbox. */
async function cell(ctx, node, dirty) {
  const { id } = await node.create();
  const c = { pause: [], vmmPause: [], seal: [], resume: [], vmmRestore: [], diff: [] };
  try {
    for (let i = 0; i < ctx.params.runs; i++) {
      if (dirty > 0) {
        await node.run(id, `dd if=/dev/urandom of=/dev/shm/d bs=1M count=${dirty} 2>/dev/null`);
      }
      for (const op of ['pause', 'snapshot', 'restore', 'seal']) node.vmm.take(op);
      c.pause.push((await node.api('POST', `/sandboxes/${id}/pause`)).ms);
      c.vmmPause.push(sum(node.vmm.take('pause')) + sum(node.vmm.take('snapshot')));
      c.seal.push(...node.vmm.take('seal'));
      c.diff.push(toMiB(await diffBytes(node, id)));
      c.resume.push((await node.api('POST', `/sandboxes/${id}/resume`, { timeout: 3600 })).ms);
      c.vmmRestore.push(sum(node.vmm.take('restore')));
    }
  } finally {
    await node.kill(id);
  }
  return c;
}

function reportCell(report, label, c) {
  report.samples(`pause, ${label} (API)`, c.pause);
  report.samples(`  VMM alone: stop + device state + RAM diff`, c.vmmPause);
  if (c.seal.length > 0) report.samples(`  disk seal`, c.seal);
  report.samples(`  RAM diff written`, c.diff, 'MiB');
  report.samples(`resume, ${label} (API, to envd /init answered)`, c.resume);
  report.samples(`  VMM alone: restore to running`, c.vmmRestore);
}

/** One node per RAM size, one fresh sandbox per dirty size. */
async function measure(ctx) {
  const { report, params } = ctx;
  const cells = [];
  for (const [i, ram] of params.ram.entries()) {
    const node = await startBenchNode(ctx, {
      name: `ram${ram}`,
      prefix: `blife${i}`,
      addressPool: `10.240.${4 + i}.0/24`,
      memoryMiB: ram,
      env: { AENV_POOL_LOW: '0', AENV_POOL_HIGH: '0' },
    });
    report.section(`guest RAM ${ram} MiB`);
    for (const dirty of params.dirty) {
      const c = await cell(ctx, node, dirty);
      reportCell(report, `${dirty} MiB dirtied`, c);
      cells.push({ ram, dirty, c });
      const p = percentile(c.pause, 50).toFixed(0);
      ctx.progress(`RAM ${ram} MiB, ${dirty} MiB dirtied: pause p50 ${p} ms`);
    }
    await node.close();
  }
  return cells;
}

/** API vs VMM per cell; scaling with the dirty size and with RAM at p50. */
function reportRatios(report, params, cells) {
  const p50 = (xs) => percentile(xs ?? [], 50);
  for (const { ram, dirty, c } of cells) {
    const at = `RAM ${ram}, ${dirty} MiB (p50)`;
    report.ratio(`pause API / VMM alone, ${at}`, p50(c.pause), p50(c.vmmPause));
    report.ratio(`resume API / VMM alone, ${at}`, p50(c.resume), p50(c.vmmRestore));
  }
  const find = (ram, dirty) => cells.find((x) => x.ram === ram && x.dirty === dirty)?.c;
  const [r0, rN] = [params.ram[0], params.ram.at(-1)];
  const [d0, dN] = [params.dirty[0], params.dirty.at(-1)];
  const base = find(r0, d0);
  const dirtiest = find(r0, dN);
  for (const op of ['pause', 'resume']) {
    const name = `${op} ${dN} / ${d0} MiB dirtied, RAM ${r0} (p50)`;
    report.ratio(name, p50(dirtiest?.[op]), p50(base?.[op]));
    if (rN !== r0) {
      const big = find(rN, d0);
      report.ratio(
        `${op} RAM ${rN} / ${r0} MiB, ${d0} MiB dirtied (p50)`,
        p50(big?.[op]),
        p50(base?.[op]),
      );
    }
  }
}

await runBench({
  name: 'lifecycle',
  title: 'pause and resume vs. guest RAM size and dirty-set size, API vs. the VMM alone',
  options: {
    runs: { default: 3, quick: 1, doc: 'pause/resume cycles per cell' },
    ram: { default: [512, 2048], quick: [512], doc: 'guest RAM sizes (MiB), one node each' },
    dirty: { default: [0, 16, 64], quick: [0, 16], doc: 'MiB dirtied before each pause' },
  },
  requires: { root: true, commands: ['qemu-system-x86_64'] },
  run: async (ctx) => reportRatios(ctx.report, ctx.params, await measure(ctx)),
});
