#!/usr/bin/env node
// Network slot benchmark: acquire latency from the pool vs. a cold slot
// build, side by side, plus release, policy replacement and bulk build.
//
//   npm run build && node bench/network.mjs [iterations=40]
//
// Needs root. Everything runs inside a network namespace this script
// creates ("b<random>-host") with a lock directory under the OS temp
// dir; both are removed at the end, also on failure. Prints figures, never
// fails on them (these machines are noisy: compare the columns of one run).
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '@aenv/shared';
import { SlotManager, networkConfigSchema, parseNetworkUpdate } from '@aenv/network';

const N = Number(process.argv[2] ?? 40);
const id = `b${randomBytes(2).toString('hex')}`;
const hostNetns = `${id}-host`;
const lockDir = mkdtempSync(join(tmpdir(), 'aenv-net-bench-'));
let prefixes = 0;

function config(low, high) {
  const base = loadConfig(networkConfigSchema, { env: {} });
  return {
    ...base,
    prefix: `${id}${prefixes++}`,
    lockDir,
    dnsServer: 'none',
    slotPool: { low, high },
  };
}

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { p50: q(0.5), p99: q(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

async function until(cond) {
  while (!cond()) await sleep(5);
}

async function bench() {
  const rows = [];
  const row = (name, samples) => rows.push({ name, ...stats(samples) });

  // Cold: every acquire builds a slot; every release destroys it.
  const cold = await SlotManager.start({ config: config(0, 0), netns: hostNetns });
  const coldAcq = [];
  const destroy = [];
  for (let i = 0; i < N; i++) {
    const [ms, slot] = await timed(() => cold.acquire());
    coldAcq.push(ms);
    destroy.push((await timed(() => cold.release(slot)))[0]);
  }
  await cold.close();

  // Pool: acquire from a full pool (no refill runs while measuring).
  const pooled = await SlotManager.start({ config: config(4, N + 4), netns: hostNetns });
  await until(() => pooled.stats().ready === N + 4);
  const poolAcq = [];
  const held = [];
  for (let i = 0; i < N; i++) {
    const [ms, slot] = await timed(() => pooled.acquire());
    poolAcq.push(ms);
    held.push(slot);
  }
  const narrow = parseNetworkUpdate({
    allowOut: ['203.0.113.10', '198.51.100.0/24:443'],
    denyOut: ['0.0.0.0/0'],
  });
  const wide = parseNetworkUpdate({ denyOut: ['192.0.2.0/24'] });
  const apply = [];
  for (let i = 0; i < N; i++) {
    apply.push((await timed(() => pooled.applyPolicy(held[0], i % 2 === 0 ? narrow : wide)))[0]);
  }
  const scrub = [];
  for (const slot of held) scrub.push((await timed(() => pooled.release(slot)))[0]);
  await pooled.close();

  row('acquire, cold build', coldAcq);
  row('acquire, from pool', poolAcq);
  row('release, scrub into pool', scrub);
  row('release, destroy', destroy);
  row('policy replace (running slot)', apply);

  // Bulk: fill a pool of 200 (batches of 16), then close (destroy all).
  const [startMs, bulk] = await timed(() =>
    SlotManager.start({ config: config(200, 200), netns: hostNetns }),
  );
  const [fillMs] = await timed(() => until(() => bulk.stats().ready === 200));
  const [closeMs] = await timed(() => bulk.close());
  return { rows, bulk: { startMs, fillMs, closeMs } };
}

function print({ rows, bulk }) {
  const f = (x) => x.toFixed(1).padStart(8);
  console.log(`network slots, ${N} samples each (ms)`);
  console.log(
    `${'operation'.padEnd(32)}${'p50'.padStart(8)}${'p99'.padStart(8)}${'mean'.padStart(8)}`,
  );
  for (const r of rows) console.log(`${r.name.padEnd(32)}${f(r.p50)}${f(r.p99)}${f(r.mean)}`);
  const [cold, pool] = rows;
  console.log(
    `pool vs cold acquire: p50 ${(cold.p50 / pool.p50).toFixed(1)}x faster, p99 ${(cold.p99 / pool.p99).toFixed(1)}x faster`,
  );
  console.log(
    `bulk: 200 slots built in ${bulk.fillMs.toFixed(0)} ms (${(bulk.fillMs / 200).toFixed(1)} ms/slot, after a ${bulk.startMs.toFixed(0)} ms start); closing destroyed them in ${bulk.closeMs.toFixed(0)} ms`,
  );
}

function cleanup() {
  const ours = readdirSync('/run/netns').filter((n) => n.startsWith(id));
  for (const ns of ours) execFileSync('ip', ['netns', 'del', ns]);
  rmSync(lockDir, { recursive: true, force: true });
  return ours.filter((n) => n !== hostNetns);
}

if (process.getuid?.() !== 0) {
  console.log('skipped: needs root (network namespaces, nftables)');
  process.exit(0);
}
execFileSync('ip', ['netns', 'add', hostNetns]);
let status = 0;
try {
  print(await bench());
} catch (err) {
  console.error(err);
  status = 1;
} finally {
  const left = cleanup();
  if (left.length > 0) console.log(`left behind by the managers (removed): ${left.join(' ')}`);
}
process.exit(status);
