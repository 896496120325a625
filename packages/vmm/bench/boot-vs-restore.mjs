#!/usr/bin/env node
// Benchmark: cold boot vs. snapshot restore of the same guest under the qemu
// driver, each measured to envd answering GET /health (204) from inside the
// VM's network namespace. Prints medians side by side and their ratio; never
// pass/fail (these machines are noisy: compare within one run).
//
//   npm run build && node packages/vmm/bench/boot-vs-restore.mjs [boots=3] [restores=5]
//
// Needs root, QEMU, the guest package built (its CLI prepares the artifacts
// into $AENV_TEST_CACHE or a temp dir). Uses the envd stand-in of the vmm
// test fixtures, or the real envd with AENV_BENCH_ENVD=real. Everything it
// creates is removed at the end.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '@aenv/shared';
import { createVmmDriver, vmmConfigSchema } from '../dist/src/index.js';
import { writeEnvdStandIn } from '../dist/test/fixtures/envd-stand-in.js';
import { guestArtifacts } from '../dist/test/fixtures/guest-artifacts.js';
import { createNetns, deleteNetns, waitForHttp } from '../dist/test/fixtures/netns.js';

const run = promisify(execFile);
const [boots = 3, restores = 5] = process.argv.slice(2).map(Number);
const NS = `aenvb-${process.pid}`;
const HEALTH = 'http://10.202.0.2:49983/health';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const work = await mkdtemp(join(tmpdir(), 'aenv-bench-'));
try {
  // AENV_BENCH_ENVD=real packages the real envd bundle instead of the stand-in
  const standIn =
    process.env.AENV_BENCH_ENVD === 'real'
      ? undefined
      : (await writeEnvdStandIn(join(work, 'envd'))).dir;
  const art = await guestArtifacts(process.env.AENV_TEST_CACHE ?? join(work, 'cache'), standIn);
  if (typeof art === 'string') throw new Error(art);
  await createNetns(NS, '10.202.0.1/30');
  const { driver, choice } = await createVmmDriver(
    loadConfig(vmmConfigSchema, {
      env: { ...process.env, AENV_QEMU_HELPER_DIR: join(work, 'helpers') },
    }),
  );
  const tools = {
    id: 'tools',
    source: { kind: 'file', path: art.toolsImage, format: 'raw' },
    readOnly: true,
  };
  const rootfs = async (name, backing, format) => {
    const path = join(work, `${name}.qcow2`);
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', backing, '-F', format, path]);
    return { id: 'rootfs', source: { kind: 'file', path, format: 'qcow2' }, readOnly: false };
  };
  const network = { netns: NS, tap: 'tap0', mac: '02:00:00:00:00:02' };
  const bootMs = [];
  let last;
  for (let i = 0; i < boots; i++) {
    const t = Date.now();
    last = await driver.boot({
      id: `bench-b${i}`,
      vcpus: 1,
      memoryMiB: 512,
      kernel: art.kernel,
      initrd: art.initrd,
      guest: { address: '10.202.0.2/30', gateway: '10.202.0.1' },
      drives: [await rootfs(`b${i}`, art.baseImage, 'raw'), tools],
      network,
      runDir: join(work, `run-b${i}`),
    });
    bootMs.push((await waitForHttp(NS, HEALTH, 204, 60_000)) - t);
    if (i < boots - 1) await last.stop();
  }
  await last.pause();
  await last.snapshot({ dir: join(work, 'snap') });
  const restoreMs = [];
  for (let i = 0; i < restores; i++) {
    const t = Date.now();
    const vm = await driver.restore(
      { dir: join(work, 'snap') },
      {
        id: `bench-r${i}`,
        drives: [await rootfs(`r${i}`, join(work, `b${boots - 1}.qcow2`), 'qcow2'), tools],
        network,
        runDir: join(work, `run-r${i}`),
      },
    );
    restoreMs.push((await waitForHttp(NS, HEALTH, 204, 20_000)) - t);
    await vm.stop();
  }
  const b = median(bootMs);
  const r = median(restoreMs);
  console.log(`driver ${choice.reason}, envd ${art.envdVersion}`);
  console.log(`cold boot → envd healthy   median ${b} ms   (${bootMs.join(', ')})`);
  console.log(`restore   → envd healthy   median ${r} ms   (${restoreMs.join(', ')})`);
  console.log(`ratio boot/restore: ${(b / r).toFixed(1)}x`);
} finally {
  await deleteNetns(NS);
  await rm(work, { recursive: true, force: true });
}
