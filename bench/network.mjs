#!/usr/bin/env node
/**
 * Network slots: acquire from the pool against a cold slot build, side by
 * side, plus release (scrub into the pool vs. destroy), egress policy
 * replacement on a running slot, and a bulk build of many slots.
 *
 * Everything runs inside a network namespace this benchmark creates
 * (`b<random>-host`), with a lock directory in its work directory; both
 * are removed at the end, also on failure.
 *
 *   node bench/network.mjs [--quick] [--iterations 40] [--bulk 200]
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { SlotManager, networkConfigSchema, parseNetworkUpdate } from '@aenv/network';
import { loadConfig } from '@aenv/shared';
import { runBench } from './lib/bench-main.mjs';

const exec = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

async function until(cond) {
  while (!cond()) await sleep(5);
}

/** Slot managers under one host netns, each with a prefix of its own. */
function managers(ctx, id, hostNetns) {
  let n = 0;
  return (low, high) => {
    const base = loadConfig(networkConfigSchema, { env: {} });
    const config = {
      ...base,
      prefix: `${id}${n++}`,
      lockDir: ctx.work,
      dnsServer: 'none',
      slotPool: { low, high },
    };
    return SlotManager.start({ config, netns: hostNetns });
  };
}

async function coldAndPooled(start, n) {
  const r = { coldAcq: [], destroy: [], poolAcq: [], scrub: [], apply: [] };
  const cold = await start(0, 0);
  for (let i = 0; i < n; i++) {
    const [ms, slot] = await timed(() => cold.acquire());
    r.coldAcq.push(ms);
    r.destroy.push((await timed(() => cold.release(slot)))[0]);
  }
  await cold.close();
  const pooled = await start(4, n + 4);
  await until(() => pooled.stats().ready === n + 4);
  const held = [];
  for (let i = 0; i < n; i++) {
    const [ms, slot] = await timed(() => pooled.acquire());
    r.poolAcq.push(ms);
    held.push(slot);
  }
  const narrow = parseNetworkUpdate({
    allowOut: ['203.0.113.10', '198.51.100.0/24:443'],
    denyOut: ['0.0.0.0/0'],
  });
  const wide = parseNetworkUpdate({ denyOut: ['192.0.2.0/24'] });
  for (let i = 0; i < n; i++) {
    r.apply.push((await timed(() => pooled.applyPolicy(held[0], i % 2 === 0 ? narrow : wide)))[0]);
  }
  for (const slot of held) r.scrub.push((await timed(() => pooled.release(slot)))[0]);
  await pooled.close();
  return r;
}

async function bulk(start, count) {
  const [startMs, m] = await timed(() => start(count, count));
  const [fillMs] = await timed(() => until(() => m.stats().ready === count));
  const [closeMs] = await timed(() => m.close());
  return { startMs, fillMs, closeMs };
}

await runBench({
  name: 'network',
  title: 'network slot acquire from the pool vs. a cold build; release, policy, bulk build',
  options: {
    iterations: { default: 40, quick: 4, doc: 'samples per operation' },
    bulk: { default: 200, quick: 8, doc: 'slots in the bulk build' },
  },
  requires: { root: true, commands: ['ip', 'nft'] },
  run: async (ctx) => {
    const { report, params } = ctx;
    const id = `b${randomBytes(2).toString('hex')}`;
    const hostNetns = `${id}-host`;
    await exec('ip', ['netns', 'add', hostNetns]);
    ctx.cleanup.add('remove the namespaces', async () => {
      const ours = (await readdir('/run/netns')).filter((n) => n.startsWith(id));
      for (const ns of ours) await exec('ip', ['netns', 'del', ns]);
      if (ours.some((n) => n !== hostNetns))
        report.note(`left behind by the managers (removed): ${ours.join(' ')}`);
    });
    const start = managers(ctx, id, hostNetns);
    const r = await coldAndPooled(start, params.iterations);
    report.section('one slot at a time');
    report.samples('acquire, cold build', r.coldAcq);
    report.samples('acquire, from pool', r.poolAcq);
    report.samples('release, scrub into pool', r.scrub);
    report.samples('release, destroy', r.destroy);
    report.samples('policy replace (running slot)', r.apply);
    const b = await bulk(start, params.bulk);
    report.section(`bulk: a pool of ${params.bulk}`);
    report.value('manager start', b.startMs, 'ms');
    report.value(`build ${params.bulk} slots`, b.fillMs, 'ms');
    report.value('per slot', b.fillMs / params.bulk, 'ms');
    report.value(`close (destroy ${params.bulk})`, b.closeMs, 'ms');
    const cold = report.find('acquire, cold build');
    const pool = report.find('acquire, from pool');
    report.ratio('cold build / pool acquire (p50)', cold.p50, pool.p50);
    report.ratio('cold build / pool acquire (p99)', cold.p99, pool.p99);
  },
});
