#!/usr/bin/env node
/**
 * What the virtio-balloon's free-page reporting gives back. Two guests
 * (512 MiB, envd stand-in), one booted with the balloon and one without,
 * plus a clone restored copy-on-write from a snapshot of the first: in
 * each a process fills 256 MiB and exits, and the host memory of its QEMU
 * (Rss, Pss) is read before, while allocated, and after the guest reported
 * the free pages. Also checks that the clone's base file (the snapshot
 * every clone maps) is untouched. Never pass/fail.
 *
 *   node packages/vmm/bench/balloon.mjs [--quick]
 *
 * Needs root, QEMU, the guest package built; AENV_TEST_CACHE keeps the
 * guest artifacts between runs.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { runBench } from '../../../bench/lib/bench-main.mjs';
import { openBench, toMiB } from './bench-kit.mjs';

async function sha256(path) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest('hex');
}

/** A process that fills `mib` MiB of memory and holds it until killed. */
const hold = (mib) => `python3 -c 'import os, time
b = bytearray(os.urandom(1 << 20)) * ${mib}
open("/tmp/held", "w").write(str(os.getpid()))
time.sleep(3600)' >/dev/null 2>&1 &
while [ ! -e /tmp/held ]; do sleep 0.2; done`;

async function cycle(kit, vm, ns, { mib, settleMs }) {
  const idle = await kit.memory(vm.pid);
  await kit.exec(ns, hold(mib));
  const held = await kit.memory(vm.pid);
  await kit.exec(ns, 'kill $(cat /tmp/held); rm -f /tmp/held');
  await new Promise((r) => setTimeout(r, settleMs));
  const freed = await kit.memory(vm.pid);
  return { idle, held, freed };
}

function reportCycle(report, label, r) {
  report.section(label);
  for (const [k, m] of Object.entries({ idle: r.idle, allocated: r.held, freed: r.freed })) {
    report.value(`${k}: Rss`, toMiB(m.rss), 'MiB');
    report.value(`${k}: Pss`, toMiB(m.pss), 'MiB');
  }
  report.value('given back (Pss)', toMiB(r.held.pss - r.freed.pss), 'MiB');
  report.ratio(
    `${label}: given back / allocated (Pss)`,
    r.held.pss - r.freed.pss,
    r.held.pss - r.idle.pss,
  );
}

await runBench({
  name: 'vmm-balloon',
  title: 'qemu driver alone: memory the balloon gives back after the guest frees it',
  options: {
    'alloc-mib': { default: 256, quick: 64, doc: 'MiB the guest allocates and frees' },
    // the guest reports free 2 MiB blocks after ~2 s; give it time
    'settle-ms': { default: 8000, quick: 3000, doc: 'wait after the free before reading memory' },
  },
  requires: { root: true, commands: ['qemu-system-x86_64', 'qemu-img'] },
  run: async (ctx) => {
    const { report, params } = ctx;
    const mib = params['alloc-mib'];
    const how = { mib, settleMs: params['settle-ms'] };
    const on = await openBench(ctx, 'bal');
    const off = await openBench(ctx, 'nob', { AENV_QEMU_BALLOON: 'false' });
    report.note(`${on.choice.reason}; 512 MiB guests allocate and free ${mib} MiB; single runs`);
    const nsOn = await on.netns(0);
    const nsOff = await off.netns(1);
    const diskOn = await on.overlay('on.qcow2', on.art.baseImage, 'raw');
    const diskOff = await off.overlay('off.qcow2', off.art.baseImage, 'raw');
    const [vmOn, vmOff] = await Promise.all([
      on.boot('balloon', 512, diskOn, nsOn),
      off.boot('noballoon', 512, diskOff, nsOff),
    ]);
    reportCycle(report, 'booted, with balloon', await cycle(on, vmOn, nsOn, how));
    reportCycle(report, 'booted, without balloon', await cycle(off, vmOff, nsOff, how));
    await vmOn.pause();
    const snap = join(on.work, 'snap');
    await vmOn.snapshot({ dir: snap });
    const before = await sha256(join(snap, 'memory'));
    const disk = await on.overlay('clone.qcow2', diskOn, 'qcow2');
    const clone = await on.restore('clone', snap, disk, nsOn);
    await on.healthy(nsOn);
    reportCycle(report, 'restored clone, with balloon', await cycle(on, clone, nsOn, how));
    const untouched = (await sha256(join(snap, 'memory'))) === before;
    report.note(
      `the snapshot's memory file after the clone freed memory: ${untouched ? 'unchanged' : 'CHANGED'}`,
    );
    if (!untouched) throw new Error("the clone's discards changed the snapshot's memory file");
  },
});
