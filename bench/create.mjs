#!/usr/bin/env node
// Create latency of a sandbox through the node API, with its per-stage
// breakdown, beside a bare `qemu-system-x86_64` boot of the same kernel
// (minimal busybox initramfs that prints READY) as the baseline.
//
//   node bench/create.mjs [--runs 5]
//
// Needs root (network slots) and a built repo (npm run build). Guest
// artifacts come from $AENV_ARTIFACTS_DIR (default /var/tmp/aenv-test-cache,
// shared with the VM tests); a cold cache builds them first (minutes).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { prepareGuestArtifacts } from '../packages/guest/dist/src/index.js';
import { createLogger, loadNodeConfig, serveNode } from '../packages/server/dist/src/index.js';
import { hostCpuKhz } from '../packages/vmm/dist/src/index.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
const cacheDir = process.env.AENV_ARTIFACTS_DIR ?? '/var/tmp/aenv-test-cache';

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const ms = (x) => (x === undefined ? '-' : `${x.toFixed(0)} ms`);

async function artifactPrep() {
  const t0 = performance.now();
  const artifacts = await prepareGuestArtifacts({ cacheDir });
  return { artifacts, ms: performance.now() - t0 };
}

function miniInitramfs(dir) {
  const root = join(dir, 'root');
  mkdirSync(join(root, 'bin'), { recursive: true });
  copyFileSync('/bin/busybox', join(root, 'bin/busybox'));
  writeFileSync(
    join(root, 'init'),
    '#!/bin/busybox sh\n/bin/busybox echo READY\n/bin/busybox poweroff -f\n',
  );
  chmodSync(join(root, 'init'), 0o755);
  const out = join(dir, 'mini.cpio');
  execFileSync('sh', ['-c', `cd ${root} && find . | cpio -o -H newc --quiet > ${out}`]);
  return out;
}

function bareBoot(kernel, initrd, khz) {
  const append = `console=ttyS0 panic=-1 quiet tsc_early_khz=${khz} tsc=reliable no_timer_check mitigations=off cryptomgr.notests`;
  const args = [
    '-M',
    'microvm',
    '-accel',
    'tcg',
    '-m',
    '512',
    '-nographic',
    '-no-reboot',
    '-nodefaults',
    '-serial',
    'stdio',
  ];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn('qemu-system-x86_64', [
      ...args,
      '-kernel',
      kernel,
      '-initrd',
      initrd,
      '-append',
      append,
    ]);
    let out = '';
    let readyAt;
    const timer = setTimeout(() => p.kill('SIGKILL'), 30_000);
    p.stdout.on('data', (d) => {
      out += d;
      if (readyAt === undefined && out.includes('READY')) {
        readyAt = performance.now() - t0;
        p.kill('SIGKILL');
      }
    });
    p.on('exit', () => {
      clearTimeout(timer);
      if (readyAt === undefined)
        reject(new Error(`bare boot never printed READY: ${out.slice(-500)}`));
      else resolve(readyAt);
    });
  });
}

async function createRuns(node) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const res = await fetch(`${node.url}/v2/sandboxes`, {
      method: 'POST',
      headers: { 'x-api-key': node.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ templateID: 'base' }),
    });
    const wall = performance.now() - t0;
    const body = await res.json();
    if (res.status !== 201) throw new Error(`create failed: ${JSON.stringify(body)}`);
    const stages = node.orchestrator.get(body.sandboxID).createTimings;
    samples.push({ wall, ...stages });
    await fetch(`${node.url}/sandboxes/${body.sandboxID}`, {
      method: 'DELETE',
      headers: { 'x-api-key': node.apiKey },
    });
    process.stderr.write(`  create ${i + 1}/${runs}: ${ms(wall)}\n`);
  }
  return samples;
}

const work = mkdtempSync(join(tmpdir(), 'aenv-bench-create-'));
try {
  process.stderr.write('artifact preparation (cache check)...\n');
  const prep = await artifactPrep();
  const khz = (await hostCpuKhz()) ?? 2_000_000;
  const initrd = miniInitramfs(work);
  const bare = [];
  for (let i = 0; i < runs; i++) bare.push(await bareBoot(prep.artifacts.kernel, initrd, khz));
  const config = loadNodeConfig(undefined, {
    AENV_HOME: join(work, 'home'),
    AENV_PORT: '0',
    AENV_ARTIFACTS_DIR: cacheDir,
    AENV_NETWORK_PREFIX: 'bcreate',
    AENV_NETWORK_ADDRESS_POOL: '10.252.0.0/24',
    AENV_NETWORK_LOCK_DIR: join(work, 'lock'),
    AENV_LOG_LEVEL: 'warn',
  });
  const node = await serveNode({ config, logger: createLogger('warn') });
  let samples;
  try {
    samples = await createRuns(node);
  } finally {
    await node.close();
  }
  const col = (k) => samples.map((s) => s[k]).filter((x) => x !== undefined);
  const rows = [
    ['artifact prep (cached check, once per node)', prep.ms, undefined],
    ['create, end to end (API)', pct(col('wall'), 50), pct(col('wall'), 90)],
    [
      '  vmm spawn (QEMU start → guest running)',
      pct(col('vmmSpawn'), 50),
      pct(col('vmmSpawn'), 90),
    ],
    [
      '  kernel → init (init started envd)',
      pct(col('kernelToInit'), 50),
      pct(col('kernelToInit'), 90),
    ],
    [
      '  init → envd ready (node startup in guest)',
      pct(col('initToEnvdReady'), 50),
      pct(col('initToEnvdReady'), 90),
    ],
    ['  envd /init', pct(col('envdInit'), 50), pct(col('envdInit'), 90)],
    ['baseline: bare qemu boot, same kernel → READY', pct(bare, 50), pct(bare, 90)],
  ];
  console.log(`\ncreate latency, ${runs} runs (TCG; p50 / p90)`);
  for (const [name, p50, p90] of rows)
    console.log(`${name.padEnd(48)} ${ms(p50).padStart(9)} ${ms(p90).padStart(9)}`);
  const ratio = pct(col('wall'), 50) / pct(bare, 50);
  console.log(`\nratio create p50 / bare boot p50: ${ratio.toFixed(2)}x`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
