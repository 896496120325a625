#!/usr/bin/env node
// Benchmark: what the virtio-balloon's free-page reporting gives back. Two
// guests (512 MiB, envd stand-in), one booted with the balloon and one
// without, plus a clone restored copy-on-write from a snapshot of the
// first: in each a process fills 256 MiB and exits, and the host
// memory of its QEMU (Rss, Pss) is read before, while allocated, and after
// the guest reported the free pages. Also checks that the clone's base file
// (the snapshot every clone maps) is untouched. Never pass/fail.
//
//   npm run build && node packages/vmm/bench/balloon.mjs
//
// Needs root, QEMU, the guest package built; AENV_TEST_CACHE keeps the guest
// artifacts between runs.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { mib, openBench } from './bench-kit.mjs';

const ALLOC_MIB = 256;
const SETTLE_MS = 8000; // the guest reports free 2 MiB blocks after ~2 s; give it time

async function sha256(path) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest('hex');
}

// a process that fills ALLOC_MIB of memory and holds it until killed
const HOLD = `python3 -c 'import os, time
b = bytearray(os.urandom(1 << 20)) * ${ALLOC_MIB}
open("/tmp/held", "w").write(str(os.getpid()))
time.sleep(3600)' >/dev/null 2>&1 &
while [ ! -e /tmp/held ]; do sleep 0.2; done`;

async function cycle(kit, vm, ns) {
  const idle = await kit.memory(vm.pid);
  await kit.exec(ns, HOLD);
  const held = await kit.memory(vm.pid);
  await kit.exec(ns, 'kill $(cat /tmp/held); rm -f /tmp/held');
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const freed = await kit.memory(vm.pid);
  return { idle, held, freed };
}

const on = await openBench('bal');
const off = await openBench('nob', { AENV_QEMU_BALLOON: 'false' });
const rows = [];
try {
  const nsOn = await on.netns(0);
  const nsOff = await off.netns(1);
  const diskOn = await on.overlay('on.qcow2', on.art.baseImage, 'raw');
  const diskOff = await off.overlay('off.qcow2', off.art.baseImage, 'raw');
  const [vmOn, vmOff] = await Promise.all([
    on.boot('balloon', 512, diskOn, nsOn),
    off.boot('noballoon', 512, diskOff, nsOff),
  ]);
  rows.push(['booted, with balloon', await cycle(on, vmOn, nsOn)]);
  rows.push(['booted, without balloon', await cycle(off, vmOff, nsOff)]);
  await vmOn.pause();
  const snap = join(on.work, 'snap');
  await vmOn.snapshot({ dir: snap });
  const before = await sha256(join(snap, 'memory'));
  const disk = await on.overlay('clone.qcow2', diskOn, 'qcow2');
  const clone = await on.restore('clone', snap, disk, nsOn);
  await on.healthy(nsOn);
  rows.push(['restored clone, with balloon', await cycle(on, clone, nsOn)]);
  const untouched = (await sha256(join(snap, 'memory'))) === before;
  console.log(
    `the snapshot's memory file after the clone freed memory: ${untouched ? 'unchanged' : 'CHANGED'}`,
  );
} finally {
  await on.close();
  await off.close();
}

console.log(
  `\n${on.choice.reason}; 512 MiB guests allocate and free ${ALLOC_MIB} MiB; single runs`,
);
console.log(
  'QEMU                         | idle Rss/Pss          | allocated Rss/Pss     | freed Rss/Pss         | given back (Pss)',
);
for (const [label, r] of rows) {
  const pair = (m) => `${mib(m.rss)}/${mib(m.pss)}`.padEnd(21);
  console.log(
    `${label.padEnd(28)} | ${pair(r.idle)} | ${pair(r.held)} | ${pair(r.freed)} | ${mib(r.held.pss - r.freed.pss)} (${(((r.held.pss - r.freed.pss) / (r.held.pss - r.idle.pss)) * 100).toFixed(0)}% of what was allocated)`,
  );
}
